"""One place that calls chat models: timeout, usage accounting, structured output, errors."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from graphs.state import ErrorRecord, RoleCost


@dataclass
class Reply:
    """Text of a model answer (None when the call failed) plus what it cost."""

    text: str | None
    cost: dict[str, RoleCost]
    errors: list[ErrorRecord] = field(default_factory=list)


def usage_of(message: BaseMessage) -> tuple[int, int]:
    """Input and output token counts reported by the provider (0 when not reported)."""
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)


def one_call_cost(role: str, message: BaseMessage | None) -> dict[str, RoleCost]:
    """Cost entry for one call by ``role``."""
    tokens_in, tokens_out = usage_of(message) if message is not None else (0, 0)
    return {role: RoleCost(llm_calls=1, input_tokens=tokens_in, output_tokens=tokens_out)}


async def ask(
    model: BaseChatModel | Runnable[Any, BaseMessage],
    prompt: str | list[BaseMessage],
    *,
    role: str,
    agent: str,
    stage: str,
    round_no: int = 0,
    timeout: float = 300.0,
) -> Reply:
    """Send one prompt; never raises for model faults, which are returned as error records."""
    messages = [HumanMessage(prompt)] if isinstance(prompt, str) else prompt
    where = ErrorRecord(round=round_no, agent=agent, stage=stage)
    try:
        message = await asyncio.wait_for(model.ainvoke(messages), timeout=timeout)
    except TimeoutError:
        error = ErrorRecord(**where, kind="timeout", message=f"no answer within {timeout:g}s")
        return Reply(None, one_call_cost(role, None), [error])
    except Exception as exc:  # provider errors come in many types; record, do not crash
        error = ErrorRecord(**where, kind="model_error", message=f"{type(exc).__name__}: {exc}")
        return Reply(None, one_call_cost(role, None), [error])
    text = message.content if isinstance(message.content, str) else str(message.text)
    return Reply(text, one_call_cost(role, message))


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
SchemaT = TypeVar("SchemaT", bound=BaseModel)


def parse_json_model(text: str, schema: type[SchemaT]) -> SchemaT | str:
    """Validate the outermost JSON object in ``text``; returns the error text on failure."""
    match = _JSON_OBJECT.search(text)
    if not match:
        return "no JSON object in output"
    try:
        return schema.model_validate_json(match.group(0))
    except ValidationError as exc:
        return f"invalid JSON for {schema.__name__}: {exc.error_count()} error(s): " + "; ".join(
            str(e["msg"]) for e in exc.errors()[:3]
        )


async def ask_structured(
    model: BaseChatModel,
    prompt: str,
    schema: type[SchemaT],
    *,
    role: str,
    agent: str,
    stage: str,
    round_no: int = 0,
    timeout: float = 300.0,
) -> tuple[SchemaT | None, Reply]:
    """Ask for output matching ``schema``; a mismatch is recorded as a parse error, never guessed.

    The embedded llama.cpp model is constrained by a JSON-schema grammar; other models get
    the schema in the prompt and their text is validated.
    """
    from tools.local_llm import LocalChatModel

    schema_json = json.dumps(schema.model_json_schema())
    if isinstance(model, LocalChatModel):
        bound = model.bind(
            response_format={"type": "json_object", "schema": schema.model_json_schema()}
        )
        reply = await ask(
            bound, prompt, role=role, agent=agent, stage=stage, round_no=round_no, timeout=timeout
        )
    else:
        full = f"{prompt}\n\nAnswer with one JSON object matching this JSON schema:\n{schema_json}"
        reply = await ask(
            model, full, role=role, agent=agent, stage=stage, round_no=round_no, timeout=timeout
        )
    if reply.text is None:
        return None, reply
    parsed = parse_json_model(reply.text, schema)
    if isinstance(parsed, str):
        reply.errors.append(
            ErrorRecord(
                round=round_no,
                agent=agent,
                stage=stage,
                kind="parse_error",
                message=parsed,
                raw=reply.text[:2000],
            )
        )
        return None, reply
    return parsed, reply
