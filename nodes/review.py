"""Human review: a method pauses before its verdict is final; a person approves or overrules it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER, INTERRUPT, NS_SEP
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from factdebate.nodes.common import Node
from factdebate.nodes.evidence_block import sanitize
from factdebate.nodes.state import decided
from factdebate.prompts.labels import LABELS_3, LABELS_4
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import Evidence
from factdebate.tools.core.secrets import redact_deep

REVIEW_NODE: Final = "human_review"
"""Node name of the review step every graph ends with (``review`` is MADAM self-reflect's)."""
MAX_NOTE_CHARS = 2000
MAX_ANSWER_CHARS = 1000
MAX_SHOWN_EVIDENCE = 20
VERDICT_ACTION = "final_verdict"
"""The review action's name when the run does not say which method it is."""
_MARKUP = set("\\`*_[]<>#|!~")
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


PENDING = "pending"
"""``review.status`` of a result whose verdict a person has not decided yet."""
NEEDS_THREAD = (
    "review needs a thread: a run with review pauses for a person's decision, which only a "
    "thread keeps; start it on a thread (POST /threads/{thread_id}/runs) or without review"
)
"""The one-line refusal of a run with review and nowhere to keep its pause."""


def held(state: Mapping[str, Any]) -> bool:
    """Whether a state holds a proposal awaiting a person's decision (``review.status`` pending)."""
    return (state.get("review") or {}).get("status") == PENDING


def hold_proposal(state: Mapping[str, Any]) -> dict[str, Any]:
    """The update that sets a method's verdict aside as a proposal until a person decides.

    ``verdict`` is null while the review waits; the proposal is ``proposed_verdict`` (and
    ``review.proposed``), so a client that reads the values alone never takes it as decided.
    """
    proposed = state.get("verdict")
    return {
        "verdict": None,
        "proposed_verdict": proposed,
        "review": {"status": PENDING, "proposed": proposed},
    }


def proposed_of(state: Mapping[str, Any]) -> Any:
    """The verdict a paused state proposes (held aside, or, in an older thread, the verdict)."""
    return state.get("proposed_verdict") if held(state) else state.get("verdict")


def has_thread() -> bool:
    """Whether the running graph keeps its state somewhere a paused review can wait in."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # called outside a run
        return False
    return isinstance(configurable.get(CONFIG_KEY_CHECKPOINTER), BaseCheckpointSaver)


def after_review(state: dict[str, Any]) -> Literal["human_review", "__end__"]:
    """Back to the review step once the proposal is held (it then pauses), else the end."""
    return REVIEW_NODE if held(state) else "__end__"  # END, as the Literal names it


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


# LangChain's human-in-the-loop format (langchain.agents.middleware.human_in_the_loop: a
# ``HITLRequest`` answered by ``{"decisions": [...]}``) and the Agent Inbox's older one
# (``HumanInterrupt``, answered by ``[{"type", "args"}]``). Both are read into the decision
# above; the mapping is in docs/review-ui.md.
DECISION_TYPES: tuple[str, ...] = ("approve", "edit", "reject", "respond")
"""The decisions a review request allows, in LangChain's human-in-the-loop words."""
_SEPARATORS = " \t\n:;,.-\u2013\u2014"


def read_decision(value: Any, choices: tuple[str, ...] | None) -> dict[str, Any]:
    """Any decision a reviewer may send, checked (see ``check_decision``).

    ``value`` is this project's own decision, LangChain's human-in-the-loop response
    ``{"decisions": [one decision]}``, one such decision (``{"type": ...}``), or the Agent
    Inbox's response list ``[{"type": ..., "args": ...}]`` of one.

    Raises:
        ReviewError: a decision in none of these shapes, several decisions, ``ignore``, a
            reject or response that names no verdict, or a decision ``check_decision`` refuses.
    """
    if isinstance(value, Mapping) and "decisions" in value:
        value = _only(value["decisions"])
    elif isinstance(value, list | tuple):
        value = _only(value)
    if isinstance(value, Mapping) and "type" in value:
        value = _typed_decision(value, choices)
    return check_decision(value, choices)


def _only(decisions: Any) -> Any:
    if not isinstance(decisions, list | tuple) or len(decisions) != 1:
        raise ReviewError("a review takes exactly one decision (a list of one)")
    return decisions[0]


def _typed_decision(decision: Mapping[str, Any], choices: tuple[str, ...] | None) -> Any:
    """A typed decision (LangChain's or the Agent Inbox's) as this project's own decision."""
    kind = decision.get("type")
    if kind in ("approve", "accept"):
        return {"approve": True}
    if kind == "edit":
        action = decision.get("edited_action", decision.get("args"))
        args = action.get("args") if isinstance(action, Mapping) else None
        if not isinstance(args, Mapping) or args.get("verdict") in (None, ""):
            raise ReviewError("an edit gives the new verdict in its action's args.verdict")
        return {"verdict": args["verdict"], "note": args.get("note") or ""}
    if kind in ("reject", "respond", "response"):
        text = decision.get("message", decision.get("args"))
        if not isinstance(text, str) or not text.strip():
            raise ReviewError(
                f"a {kind} decides nothing without a verdict: write it first in the message "
                "(e.g. 'REFUTES: why'), or send edit; the thread keeps waiting"
            )
        return _verdict_from_text(kind, text, choices)
    if kind == "ignore":
        raise ReviewError(
            "ignore does not decide a review: the thread keeps waiting for approve, edit, "
            "or a reject naming a verdict"
        )
    raise ReviewError(f"unknown decision type {kind!r}: send one of {', '.join(DECISION_TYPES)}")


def _verdict_from_text(kind: str, text: str, choices: tuple[str, ...] | None) -> dict[str, Any]:
    """A reject's or response's verdict (the label it starts with) and the rest as its note.

    Where the method's answers are free (MADAM-RAG), a response is the reviewer's answers and
    a reject, which names none, is refused.
    """
    if choices is None:
        if kind == "reject":
            raise ReviewError(
                "this method's verdict is a list of answers: send edit or respond with them "
                "(several separated by ';'); the thread keeps waiting"
            )
        return {"verdict": text}
    wanted = " ".join(text.replace("_", " ").split())
    for label in sorted(choices, key=len, reverse=True):  # NOT FACTUAL before FACTUAL
        head, rest = wanted[: len(label)], wanted[len(label) :]
        if head.upper() == label and (not rest or rest[0] in _SEPARATORS):
            return {"verdict": label, "note": rest.strip(_SEPARATORS)}
    raise ReviewError(
        f"a {kind} overrules only with a verdict first in its message, one of "
        f"{', '.join(choices)} (e.g. '{choices[0]}: why'); the thread keeps waiting"
    )


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


def review_request(
    state: dict[str, Any], allowed: tuple[str, ...] | None, method: str = VERDICT_ACTION
) -> dict[str, Any]:
    """What the review step pauses with: the proposed verdict, its reasons, the choices.

    One request in three readings: this project's own keys (``kind``, ``proposed``,
    ``choices``...), LangChain's human-in-the-loop request (``action_requests``,
    ``review_configs``) and the Agent Inbox's older human interrupt (``action_request``,
    ``config``, ``description``). The action is ``method`` finalizing its verdict.
    """
    justification = state.get("justification") or ""
    description = review_description(state, allowed, method)
    args = {"verdict": proposed_of(state), "justification": justification, "note": ""}
    return {
        "kind": "review",
        "proposed": proposed_of(state),
        "justification": justification,
        "stop_reason": state.get("stop_reason"),
        "rounds": state.get("rounds"),
        "choices": list(allowed) if allowed is not None else None,
        "action_requests": [{"name": method, "args": args, "description": description}],
        "review_configs": [{"action_name": method, "allowed_decisions": list(DECISION_TYPES)}],
        "action_request": {"action": method, "args": args},
        "config": {
            "allow_accept": True,
            "allow_edit": True,
            "allow_respond": True,
            "allow_ignore": False,  # ignoring decides nothing: the thread keeps waiting
        },
        "description": description,
    }


def review_description(state: dict[str, Any], allowed: tuple[str, ...] | None, method: str) -> str:
    """The Markdown a reviewer decides from: claim, proposal, why it stopped, agents, evidence."""
    claim = state.get("claim") or state.get("question") or ""
    proposed = proposed_of(state)
    summary = f"{_inline(method)} proposes {_inline(proposed or 'no verdict')}"
    lines = [f"{summary} for: {_inline(claim, 160)}", "", "**Claim**", _fenced(claim)]
    lines += ["", f"**Proposed verdict:** {_inline(proposed or 'none')}"]
    stop = f"{_inline(state.get('stop_reason') or 'unknown')} after round {state.get('rounds')}"
    decided_by = state.get("decided_by") or {}
    if decided_by.get("agent"):
        stop += f", decided by the {_inline(decided_by['agent'])}"
        if decided_by.get("detail"):
            stop += f": {_inline(decided_by['detail'])}"
    lines += ["", f"**Why the run stopped:** {stop}"]
    if state.get("justification"):
        lines += ["", "**Justification**", _fenced(state["justification"])]
    last: dict[str, str] = {}
    for turn in state.get("transcript") or []:
        if isinstance(turn, dict) and turn.get("agent") and turn.get("label"):
            last[str(turn["agent"])] = str(turn["label"])
    if last:
        lines += ["", "**Last label of each agent**"]
        lines += [f"- {_inline(agent)}: {_inline(label)}" for agent, label in last.items()]
    docs = evidence_of(state)
    lines += ["", "**Evidence**" if docs else "**Evidence:** none read"]
    for doc in docs:
        title = doc.get("title") or doc.get("id") or "untitled"
        lines.append(f"- {_inline(title)} ({_inline(doc.get('source') or 'unknown source')})")
    total = (state.get("cost") or {}).get("total") or {}
    lines += [
        "",
        f"**Cost:** {total.get('llm_calls', 0)} model calls, {total.get('input_tokens', 0)} "
        f"input and {total.get('output_tokens', 0)} output tokens",
        "",
        "**Choices:** "
        + (", ".join(allowed) if allowed is not None else "any answers, separated by ';'"),
        "",
        "Approve (accept) keeps the verdict; edit sets another verdict (args.verdict) with a note; "
        "reject or respond (a response) overrules when its message starts with a verdict "
        "('REFUTES: why'); ignore decides nothing.",
    ]
    return "\n".join(lines)


def _inline(value: Any, max_chars: int = 300) -> str:
    """Untrusted text for one Markdown line: cleaned, one line, its markup characters escaped."""
    text = " ".join(sanitize(str(value), max_chars).split())
    return "".join(f"\\{ch}" if ch in _MARKUP else ch for ch in text)


def _fenced(value: Any, max_chars: int = 1500) -> str:
    """Untrusted text as a Markdown code block, its fence longer than any backtick run in it."""
    text = sanitize(str(value), max_chars).strip() or "(none)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def method_of_run() -> str:
    """The method the running graph serves (server graph id or the API's run metadata)."""
    try:
        metadata = get_config().get("metadata") or {}
    except RuntimeError:  # called outside a run
        return VERDICT_ACTION
    # "factdebate_method" is what factdebate.api records (METHOD_KEY); "graph_id" the server's.
    for key in ("factdebate_method", "graph_id"):
        name = metadata.get(key)
        if isinstance(name, str) and name:
            return name
    return VERDICT_ACTION


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


def reviewer_of_run() -> str:
    """Who resumed the running step: the identity the server authenticated, else ``local``.

    A LangGraph server writes the caller's identity into the run's configuration itself
    (``langgraph_auth_user_id``, a key no request can set); a run without a server is the
    local user's.
    """
    try:
        identity = get_config().get("configurable", {}).get("langgraph_auth_user_id")
    except RuntimeError:  # called outside a run
        return "local"
    return identity if isinstance(identity, str) and identity else "local"


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
            if not has_thread():  # nobody could ever answer the pause
                raise ReviewError(NEEDS_THREAD)
            if not held(state):  # first set the verdict aside (a step of its own: stored)
                return hold_proposal(state)
            request = review_request(state, choices(context), method_of_run())
        request.pop("refused", None)
        allowed = tuple(request["choices"]) if request.get("choices") is not None else None
        proposed = request.get("proposed")
        while True:
            # A decision that does not fit pauses again with the same request (and why): the
            # refused answer is never applied, and the thread waits for a good one.
            try:
                decision = read_decision(interrupt(request), allowed)
                break
            except ReviewError as exc:
                request = {**request, "refused": str(exc)}
        record = {
            "status": "approved" if decision["approve"] else "overruled",
            "proposed": proposed,
            "note": decision["note"],
            "at": datetime.now(UTC).isoformat(timespec="seconds"),  # this process's time
            "by": reviewer_of_run(),
        }
        if decision["approve"]:  # the held proposal becomes the verdict
            return {"verdict": proposed, "review": record}
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
    """Add the review step before END; returns its name, the target of every finished run.

    With review on, the step runs twice: it first holds the verdict aside as a proposal
    (stored as a step of its own), then pauses for the decision and writes it.
    """
    builder.add_node(REVIEW_NODE, make_review_node(choices))
    builder.add_conditional_edges(REVIEW_NODE, after_review, [REVIEW_NODE, END])
    return REVIEW_NODE
