"""One place that calls chat models: timeout, usage accounting, structured output, errors."""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from tools.records import ErrorRecord, RoleCost
from tools.secrets import redact as redact  # re-exported: callers import it from here


@dataclass(frozen=True)
class CallSite:
    """Who asks and under which limits: named on every cost entry and error record."""

    role: str
    agent: str
    stage: str
    round_no: int = 0
    timeout: float = 300.0
    retries: int = 2

    def error(self, kind: str, message: str, raw: str = "") -> ErrorRecord:
        """An error record for this call site (``raw`` kept, capped, when given)."""
        record = ErrorRecord(
            round=self.round_no, agent=self.agent, stage=self.stage, kind=kind, message=message
        )
        if raw:
            record["raw"] = raw[:2000]
        return record


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


TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_TRANSIENT_NAMES = ("ratelimit", "timeout", "connection", "overloaded", "serviceunavailable")
RETRY_WAIT_INITIAL = 1.0
"""First backoff wait in seconds (doubles per attempt, with jitter)."""
RETRY_WAIT_MAX = 20.0
"""Longest exponential backoff wait, seconds."""
RETRY_AFTER_CAP = 60.0
"""Longest wait honoured from a provider's Retry-After, seconds."""
_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


def status_of(exc: BaseException) -> int | None:
    """HTTP status carried by a provider exception, if any."""
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether retrying may help: timeouts, connection drops, rate limits, 5xx overloads."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if status_of(exc) in TRANSIENT_STATUS:
        return True
    names = [cls.__name__.lower() for cls in type(exc).__mro__]
    return any(marker in name for name in names for marker in _TRANSIENT_NAMES)


def is_rate_limit(exc: BaseException) -> bool:
    """A 429 or an exception class named like a rate limit."""
    return status_of(exc) == 429 or "ratelimit" in type(exc).__name__.lower()


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (Retry-After header or attribute), if any."""
    raw: Any = getattr(exc, "retry_after", None)
    if raw is None:
        for holder in (getattr(exc, "response", None), exc):
            headers = getattr(holder, "headers", None)
            if headers is not None and hasattr(headers, "get"):
                raw = headers.get("retry-after") or headers.get("Retry-After")
                if raw is not None:
                    break
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        try:
            when = parsedate_to_datetime(str(raw))
        except (TypeError, ValueError):
            return None
        import datetime as dt

        seconds = (when - dt.datetime.now(when.tzinfo or dt.UTC)).total_seconds()
    return max(0.0, seconds)


def backoff_wait(state: RetryCallState) -> float:
    """Wait before the next attempt: the provider's Retry-After (capped) or exponential jitter."""
    exc = state.outcome.exception() if state.outcome is not None else None
    asked = retry_after(exc) if exc is not None else None
    if asked is not None:
        return min(asked, RETRY_AFTER_CAP)
    ceiling = min(RETRY_WAIT_MAX, RETRY_WAIT_INITIAL * 2 ** (state.attempt_number - 1))
    return random.uniform(ceiling / 2, ceiling)


def _is_local(model: Any) -> bool:
    """Whether ``model`` (or the model a binding wraps) is the embedded llama.cpp model."""
    local = sys.modules.get("tools.local_llm")
    cls = getattr(local, "LocalChatModel", None)
    return cls is not None and isinstance(getattr(model, "bound", model), cls)


def _failure(exc: BaseException, attempts: int, timeout: float) -> tuple[str, str]:
    """Error kind and (redacted) message after the last attempt failed with ``exc``."""
    tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
    if isinstance(exc, TimeoutError):
        return "timeout", f"no answer within {timeout:g}s{tries}"
    kind = "rate_limited" if is_rate_limit(exc) else "model_error"
    return kind, redact(f"{type(exc).__name__}: {exc}{tries}")[:2000]


async def ask(
    model: BaseChatModel | Runnable[Any, BaseMessage],
    prompt: str | list[BaseMessage],
    site: CallSite,
) -> Reply:
    """Send one prompt; never raises for model faults, which are returned as error records.

    Transient faults (timeouts, connection errors, 408/429/5xx, rate-limit classes) are
    retried up to ``retries`` more times with bounded exponential backoff (a provider's
    Retry-After wins, capped); other errors fail at once. Every attempt counts as an LLM call.
    """
    messages = [HumanMessage(prompt)] if isinstance(prompt, str) else prompt
    role, timeout, retries = site.role, site.timeout, site.retries
    if _is_local(model):
        retries = 0  # the embedded model has no transient faults; a timeout would recur
    attempts = 0
    retrying = AsyncRetrying(
        stop=stop_after_attempt(max(0, retries) + 1),
        wait=backoff_wait,
        retry=retry_if_exception(is_transient),
        sleep=lambda seconds: _sleep(seconds),
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                attempts += 1
                message = await asyncio.wait_for(model.ainvoke(messages), timeout=timeout)
    except Exception as exc:  # provider errors come in many types; record, do not crash
        kind, text = _failure(exc, attempts, timeout)
        cost = one_call_cost(role, None)
        cost[role]["llm_calls"] = attempts
        return Reply(None, cost, [site.error(kind, text)])
    text = message.content if isinstance(message.content, str) else str(message.text)
    text = redact(text)  # a reply echoing a provider key never reaches a transcript
    cost = one_call_cost(role, message)
    cost[role]["llm_calls"] = attempts
    return Reply(text, cost)


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
    site: CallSite,
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
        reply = await ask(bound, prompt, site)
    else:
        full = f"{prompt}\n\nAnswer with one JSON object matching this JSON schema:\n{schema_json}"
        reply = await ask(model, full, site)
    if reply.text is None:
        return None, reply
    parsed = parse_json_model(reply.text, schema)
    if isinstance(parsed, str):
        reply.errors.append(site.error("parse_error", parsed, reply.text))
        return None, reply
    return parsed, reply
