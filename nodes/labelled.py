"""Ask a model for a labelled answer and read the label; a failure becomes an error record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from nodes.parse import ParseFailure, parse_label
from prompts.labels import LABELS_3
from tools.llm import CallSite, ask
from tools.records import ErrorRecord, RoleCost

T = TypeVar("T")


@dataclass
class ParsedReply(Generic[T]):
    """A model answer, the value read from it (None if unreadable), its cost and errors."""

    text: str
    value: T | None
    cost: dict[str, RoleCost]
    errors: list[ErrorRecord] = field(default_factory=list)

    @property
    def label(self) -> T | None:
        """The value, under the name label-asking callers use."""
        return self.value


async def ask_parsed(
    model: BaseChatModel | Runnable[Any, BaseMessage],
    prompt: str,
    parse: Callable[[str], T | ParseFailure],
    site: CallSite,
    *,
    on_failure: str = "",
) -> ParsedReply[T]:
    """Ask ``prompt`` and read the answer with ``parse``; a failure becomes an error record.

    ``on_failure`` is appended to the recorded reason (e.g. what the caller does instead).
    """
    reply = await ask(model, prompt, site)
    errors = list(reply.errors)
    value: T | None = None
    if reply.text is not None:
        parsed = parse(reply.text)
        if isinstance(parsed, ParseFailure):
            reason = f"{parsed.reason}; {on_failure}" if on_failure else parsed.reason
            errors.append(site.error("parse_error", reason, parsed.raw))
        else:
            value = parsed
    return ParsedReply(reply.text or "", value, reply.cost, errors)


async def ask_label(
    model: BaseChatModel,
    prompt: str,
    site: CallSite,
    *,
    labels: tuple[str, ...] = LABELS_3,
) -> ParsedReply[str]:
    """Ask ``prompt`` and parse the label on the last line; a failure is an error record.

    The embedded local model is held to that format by a grammar (see ``label_grammar``).
    """
    from tools.local_llm import LocalChatModel, label_grammar

    target: BaseChatModel | Runnable[Any, BaseMessage] = model
    if isinstance(model, LocalChatModel):
        target = model.bind(grammar=label_grammar(labels))
    return await ask_parsed(target, prompt, lambda text: parse_label(text, labels), site)
