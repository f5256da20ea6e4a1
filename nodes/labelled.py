"""Ask a model for a labelled answer and read the label; a failure becomes an error record."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from factdebate.nodes.parse import ParseFailure, parse_label
from factdebate.prompts.labels import LABEL_SPELLINGS, LABELS_3, spelling_key
from factdebate.tools.core.records import ErrorRecord, RoleCost
from factdebate.tools.models.llm import CallSite, ask

T = TypeVar("T")

_TRUTHS = ("TRUE", "FALSE", "CORRECT", "INCORRECT")
_MARKER = r"(?:final\s+)?(?:verdict|label|answer|conclusion|rating|judge?ment)"
_LABEL_LINE_RE = re.compile(rf"^\W*(?:{_MARKER}\s*[:=-]?\s*)?(?P<label>[^:]*?)\W*$", re.I)
_BOLD_LABEL_RE = re.compile(r"\*\*\s*([^*\n]+?)\s*\*\*")


def _is_label(text: str) -> bool:
    key = spelling_key(text.replace("*", " ").replace("`", " "))
    return bool(key) and (key in LABEL_SPELLINGS or key in _TRUTHS)


def without_label(text: str | None) -> str:
    """``text`` without its closing label line, and any label left in it unbolded.

    The label line is the last non-blank line when it holds only a label (``**SUPPORTS**``,
    ``Verdict: REFUTES``, ``Final answer: NEI.``); it is shown as a label instead. A reply
    that is only a label becomes empty. Bold around a label elsewhere (``**SUPPORTS**``)
    becomes plain text, so no raw markdown reaches a terminal or a page.
    """
    lines = (text or "").strip().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    match = _LABEL_LINE_RE.match(lines[-1].strip()) if lines else None
    if match and _is_label(match.group("label")):
        lines.pop()
    body = "\n".join(lines).strip()
    return _BOLD_LABEL_RE.sub(lambda m: m.group(1) if _is_label(m.group(1)) else m.group(0), body)


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
    from factdebate.tools.models.local_llm import LocalChatModel, label_grammar

    target: BaseChatModel | Runnable[Any, BaseMessage] = model
    if isinstance(model, LocalChatModel):
        target = model.bind(grammar=label_grammar(labels))
    return await ask_parsed(target, prompt, lambda text: parse_label(text, labels), site)


NO_REPLY_KINDS = frozenset({"model_error", "timeout", "rate_limited"})
"""Error kinds of a model call that brought no reply back."""


def shown_label(turn: Mapping[str, Any], errors: Iterable[Mapping[str, Any]]) -> str:
    """The label to show for a transcript turn (``""`` for a free-text turn).

    A turn without a label shows ``UNPARSED`` only when an error was recorded for its agent
    and round (its label could not be read), and ``NO REPLY`` when it has no answer and every
    error recorded for it is a call that brought nothing back; otherwise it is a free-text
    turn (a MADAM-RAG agent's short answer, a moderator's round note, a review) and shows no
    label.
    """
    if turn.get("label"):
        return str(turn["label"])
    kinds = {
        e.get("kind")
        for e in errors
        if e.get("agent") == turn.get("agent") and e.get("round") == turn.get("round")
    }
    if not kinds:
        return ""
    if kinds <= NO_REPLY_KINDS and not str(turn.get("answer") or "").strip():
        return "NO REPLY"  # every recorded error is a call that brought nothing back
    return "UNPARSED"
