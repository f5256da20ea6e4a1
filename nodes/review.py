"""Human review: a method pauses before its verdict is final; a person approves or overrules it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER, INTERRUPT, NS_SEP
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from factdebate.nodes.common import Node
from factdebate.nodes.state import decided
from factdebate.prompts.labels import LABELS_3, LABELS_4
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import Evidence
from factdebate.tools.core.secrets import redact_deep

REVIEW_NODE = "human_review"
"""Node name of the review step every graph ends with (``review`` is MADAM self-reflect's)."""
MAX_NOTE_CHARS = 2000
MAX_ANSWER_CHARS = 1000
MAX_SHOWN_EVIDENCE = 20
ANSWER_LABELS: tuple[str, ...] = ("FACTUAL", "NOT FACTUAL")
"""MAD-Fact's answer-level verdicts."""
TRUTH_LABELS: tuple[str, ...] = ("TRUE", "FALSE")

Choices = Callable[[Any], tuple[str, ...] | None]
"""The verdicts a reviewer may choose under the run's settings; None = free answers."""


class ReviewError(FactDebateError, ValueError):
    """A review decision that cannot be applied (one line, nothing changed)."""


def _setting(context: Any, name: str, default: Any) -> Any:
    """A setting from the run's context, whether a settings object or a plain dict (server)."""
    if isinstance(context, Mapping):
        return context.get(name, default)
    return getattr(context, name, default)


def fever_labels(context: Any) -> tuple[str, ...]:
    """FEVER's three labels (Tool-MAD and its baselines)."""
    return LABELS_3


def averitec_labels(context: Any) -> tuple[str, ...]:
    """AVeriTeC's four labels, or three where the settings ask for them (DebateCV family)."""
    return LABELS_3 if _setting(context, "labels", 4) == 3 else LABELS_4


def truth_labels(context: Any) -> tuple[str, ...]:
    """A single claim's rating (the single-verifier baseline)."""
    return TRUTH_LABELS


def answer_labels(context: Any) -> tuple[str, ...]:
    """MAD-Fact's answer-level verdicts."""
    return ANSWER_LABELS


def free_answers(context: Any) -> None:
    """MADAM-RAG: the reviewer writes the answers (``;`` between several)."""
    return None


def review_wanted(context: Any) -> bool:
    """Whether the run's settings ask for a human review before the verdict is final."""
    return bool(_setting(context, "review", False))


def check_decision(decision: Any, choices: tuple[str, ...] | None) -> dict[str, Any]:
    """A reviewer's decision, checked: ``{"approve", "verdict", "note", "at"}``.

    ``decision`` is ``{"approve": True}`` or ``{"verdict": V}``, each with an optional
    ``note`` and ``at`` (an ISO time; now when missing).

    Raises:
        ReviewError: neither or both of approve/verdict, a verdict outside ``choices``, an
            empty or oversized answer or note.
    """
    if not isinstance(decision, Mapping):
        raise ReviewError(f"a review decision is a mapping, got {type(decision).__name__}")
    approve = decision.get("approve") is True
    verdict = decision.get("verdict")
    if approve == (verdict not in (None, "")):
        raise ReviewError("a review either approves or gives a verdict (exactly one of them)")
    note = decision.get("note") or ""
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise ReviewError(f"a review note is text of at most {MAX_NOTE_CHARS} characters")
    if verdict is not None and not approve:
        verdict = _checked_verdict(verdict, choices)
    at = decision.get("at") or datetime.now(UTC).isoformat(timespec="seconds")
    return {"approve": approve, "verdict": None if approve else verdict, "note": note, "at": at}


def _checked_verdict(verdict: Any, choices: tuple[str, ...] | None) -> str:
    """A label from ``choices`` (any case, spaces or underscores), or a free answer list."""
    if not isinstance(verdict, str) or not verdict.strip():
        raise ReviewError("a review verdict is non-empty text")
    if choices is None:
        answers = [a.strip() for a in verdict.split(";") if a.strip()]
        text = "; ".join(answers)
        if not answers or len(text) > MAX_ANSWER_CHARS or not text.isprintable():
            raise ReviewError(
                f"answers are printable text of at most {MAX_ANSWER_CHARS} characters, "
                "several separated by ';'"
            )
        return text
    wanted = " ".join(verdict.replace("_", " ").split()).upper()
    if wanted not in choices:
        raise ReviewError(f"unknown verdict {verdict!r}: choose one of {', '.join(choices)}")
    return wanted


def review_request(state: dict[str, Any], allowed: tuple[str, ...] | None) -> dict[str, Any]:
    """What the review step pauses with: the proposed verdict, its reasons, the choices."""
    return {
        "kind": "review",
        "proposed": state.get("verdict"),
        "justification": state.get("justification") or "",
        "stop_reason": state.get("stop_reason"),
        "rounds": state.get("rounds"),
        "choices": list(allowed) if allowed is not None else None,
    }


async def paused_request(runtime: Runtime[Any]) -> dict[str, Any] | None:
    """The review request the running step paused with, as its thread stored it; else None.

    A paused step's interrupt is kept with the checkpoint it paused at (in its graph's
    namespace, the step's own less its last part), under the step's task, which keeps its id
    when the thread goes on from there; a run without a checkpointer, or a step that has not
    paused, has none.
    """
    info = runtime.execution_info
    try:
        checkpointer: Any = get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER)
    except RuntimeError:  # called outside a run
        return None
    if info is None or not info.thread_id or not isinstance(checkpointer, BaseCheckpointSaver):
        return None
    stored = await checkpointer.aget_tuple(
        {
            "configurable": {
                "thread_id": info.thread_id,
                "checkpoint_ns": info.checkpoint_ns.rpartition(NS_SEP)[0],  # the step's graph
                "checkpoint_id": info.checkpoint_id,
            }
        }
    )
    for task_id, channel, value in getattr(stored, "pending_writes", None) or ():
        if task_id != info.task_id or channel != INTERRUPT:
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            found = getattr(item, "value", None)
            if isinstance(found, dict) and is_review(found):
                return dict(found)
    return None


def make_review_node(choices: Choices) -> Node:
    """The last step of a graph: passes through, or (``review`` on) waits for a reviewer."""

    async def human_review(state: dict[str, Any], *, runtime: Runtime[Any]) -> dict[str, Any]:
        """Pause with the proposed verdict; apply the reviewer's approval or overruling."""
        context = runtime.context
        # A thread paused here waits for a decision whatever a later request's settings say
        # (a resume may come without ``review``, or with no settings at all): the request it
        # stored when it paused, choices included, is what the decision is checked against.
        request = await paused_request(runtime)
        if request is None:
            if not review_wanted(context):
                return {}
            request = review_request(state, choices(context))
        request.pop("refused", None)
        allowed = tuple(request["choices"]) if request.get("choices") is not None else None
        proposed = request.get("proposed")
        while True:
            # A decision that does not fit pauses again with the same request (and why): the
            # refused answer is never applied, and the thread waits for a good one.
            try:
                decision = check_decision(interrupt(request), allowed)
                break
            except ReviewError as exc:
                request = {**request, "refused": str(exc)}
        record = {
            "status": "approved" if decision["approve"] else "overruled",
            "proposed": proposed,
            "note": decision["note"],
            "at": decision["at"],
        }
        if decision["approve"]:
            return {"review": record}
        note = f": {decision['note']}" if decision["note"] else ""
        update: dict[str, Any] = {
            "verdict": decision["verdict"],
            "review": record,
            "decided_by": decided(  # the person decided; the method's proposal stays in review
                "reviewer",
                int(state.get("rounds") or 0),
                "overruled",
                f"A person overruled the proposed verdict {proposed}{note}",
            ),
        }
        if allowed is None:  # MADAM-RAG keeps its answer list beside the joined verdict
            update["answers"] = decision["verdict"].split("; ")
        return update

    return human_review


def is_review(value: Any) -> bool:
    """Whether an interrupt's value is this module's review request."""
    return isinstance(value, dict) and value.get("kind") == "review"


def pending_review(snapshot: Any) -> dict[str, Any] | None:
    """The review request a stored thread waits on, or None when it waits on none."""
    for task in getattr(snapshot, "tasks", ()) or ():
        if task.name != REVIEW_NODE:
            continue
        for item in task.interrupts or ():
            value = getattr(item, "value", None)
            if isinstance(value, dict) and is_review(value):
                return dict(value)
    return None


def evidence_of(state: dict[str, Any]) -> list[Evidence]:
    """The documents a run read, once each, in the order they first appeared."""
    seen: dict[str, Evidence] = {}
    pools = [state.get("documents") or [], state.get("evidence") or []]
    pools += [turn.get("evidence") or [] for turn in state.get("transcript") or []]
    for pool in pools:
        for doc in pool:
            if isinstance(doc, dict):
                key = str(doc.get("id") or doc.get("title") or len(seen))
                seen.setdefault(key, doc)  # type: ignore[arg-type]
    return list(seen.values())[:MAX_SHOWN_EVIDENCE]


def proposal(request: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """What a reviewer is shown: the proposed verdict, its reasoning, evidence and debate."""
    return dict(
        redact_deep(
            {
                "verdict": request.get("proposed"),
                "justification": request.get("justification") or "",
                "decided_by": state.get("decided_by"),
                "stop_reason": request.get("stop_reason"),
                "rounds": request.get("rounds"),
                "choices": request.get("choices"),
                "evidence": evidence_of(state),
                "transcript": state.get("transcript") or [],
            }
        )
    )


def awaiting(thread: str, request: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """The API's answer for a run paused at review."""
    return {"status": "awaiting_review", "thread": thread, "proposed": proposal(request, state)}


def add_review(builder: Any, choices: Choices) -> str:
    """Add the review step before END; returns its name, the target of every finished run."""
    builder.add_node(REVIEW_NODE, make_review_node(choices))
    builder.add_edge(REVIEW_NODE, END)
    return REVIEW_NODE
