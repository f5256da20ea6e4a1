"""Consensus check: stop when the debaters agree and (optionally) both answers score well."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.common import budget_stop, over_budget, route, settings, turn_of
from factdebate.nodes.labelled import without_label
from factdebate.nodes.state import MODEL_FAILURE, DecidedBy, Turn, decided
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.rounds import DEBATERS
from factdebate.nodes.tool_mad.state import ToolMADState
from factdebate.tools.core.records import ErrorRecord
from factdebate.tools.models.llm import is_fault

Decision = Literal["consensus", "next_round", "judge", "budget_exhausted", "score_failed"]


def is_stable(turn: Turn, ctx: ToolMADContext) -> bool:
    """Both scores present and over their thresholds (faithfulness only for tool users).

    A score that could not be computed (None) never passes.
    """
    bounds = ctx.thresholds()
    relevance = turn.get("answer_relevance")
    if relevance is None or relevance < bounds.relevance:
        return False
    if turn.get("tool") == "none":
        return True
    faithfulness = turn.get("faithfulness")
    return faithfulness is not None and faithfulness >= bounds.faithfulness


def scoring_faults(turns: list[Turn], errors: list[ErrorRecord], round_no: int) -> set[str]:
    """The debaters of ``turns`` missing a score because a scoring call brought no reply.

    A call that failed after its retries in ``round_no`` (stage ``score`` or ``score:...``)
    counts only where the turn lacks a score it needs (a relevance from the questions that
    did come back is a score).
    """
    faulted = {
        str(e.get("agent"))
        for e in errors
        if str(e.get("stage", "")).partition(":")[0] == "score"
        and e.get("round") == round_no
        and is_fault(e)
    }
    return {
        str(t.get("agent"))
        for t in turns
        if t.get("agent") in faulted
        and (
            t.get("answer_relevance") is None
            or (t.get("tool") != "none" and t.get("faithfulness") is None)
        )
    }


def decide(
    turns: list[Turn], round_no: int, ctx: ToolMADContext, unscored: frozenset[str] = frozenset()
) -> Decision:
    """Pure decision rule of one finished round; the turns of ``unscored`` agents pass unscored."""
    labels = {turn.get("label") for turn in turns}
    agreed = len(turns) == len(DEBATERS) and len(labels) == 1 and None not in labels
    stable = not ctx.stability_score or all(
        turn.get("agent") in unscored or is_stable(turn, ctx) for turn in turns
    )
    if agreed and stable:
        return "consensus"
    return "judge" if round_no >= ctx.max_rounds else "next_round"


async def consensus_check(state: ToolMADState, runtime: Runtime[ToolMADContext]) -> dict[str, Any]:
    """Record the round's decision; on consensus the shared label becomes the verdict."""
    ctx = settings(runtime, ToolMADContext)
    round_no = state["round"]
    turns = [t for a in DEBATERS if (t := turn_of(state.get("transcript", []), a, round_no))]
    errors = state.get("errors", [])
    faulted = scoring_faults(turns, errors, round_no) if ctx.stability_score else set()
    if faulted and ctx.score_failure == "fail":  # a missing score never buys another round
        return score_failed_stop(sorted(faulted), round_no)
    unscored = frozenset(faulted)  # score_failure="unscored": judged without their scores
    decision: Decision = decide(turns, round_no, ctx, unscored)
    spent = over_budget(state.get("cost", {}), ctx)
    update: dict[str, Any] = {"decision": decision}
    if decision != "consensus" and spent:
        stop = budget_stop(spent, agent="consensus_check", round_no=round_no)
        return {**stop, "decision": "budget_exhausted"}
    if decision == "consensus":
        best = max(
            turns, key=lambda t: (t.get("faithfulness") or 0.0) + (t.get("answer_relevance") or 0.0)
        )
        update.update(
            verdict=turns[0]["label"],
            stop_reason="consensus",
            justification=without_label(best.get("answer")),
            decided_by=consensus_record(turns, round_no, ctx, str(best.get("agent")), unscored),
        )
    return update


def score_failed_stop(agents: list[str], round_no: int) -> dict[str, Any]:
    """The update that ends a claim without a verdict: a turn's scoring call brought no reply."""
    detail = (
        f"The scoring call of {', '.join(agents)} in round {round_no} brought no reply after "
        "its retries; the claim is failed, not decided (score_failure=fail)."
    )
    return {
        "decision": "score_failed",
        "verdict": None,
        "stop_reason": MODEL_FAILURE,
        "justification": detail,
        "decided_by": decided("consensus_check", round_no, MODEL_FAILURE, detail),
    }


def consensus_record(
    turns: list[Turn],
    round_no: int,
    ctx: ToolMADContext,
    reasoning_of: str,
    unscored: frozenset[str] = frozenset(),
) -> DecidedBy:
    """Provenance of a consensus verdict: the shared label and the scores that passed."""
    detail = f"Both debaters concluded {turns[0].get('label')} in round {round_no}"
    if unscored:
        detail += (
            f"; {', '.join(sorted(unscored))} judged unscored (its scoring call brought no "
            "reply; score_failure=unscored)"
        )
    if ctx.stability_score:
        bounds = ctx.thresholds()
        detail += (
            f", every answer over the thresholds (faithfulness {bounds.faithfulness:.2f}"
            f", answer relevance {bounds.relevance:.2f}; gate profile {bounds.source})"
        )
    scores = {
        str(t.get("agent")): {
            "faithfulness": t.get("faithfulness"),
            "answer_relevance": t.get("answer_relevance"),
        }
        for t in turns
    }
    detail += f"; the justification is {reasoning_of}'s reasoning."
    return decided("debaters", round_no, "consensus", detail, scores=scores)


def route_after_check(state: ToolMADState) -> Literal["start_round", "judge", "__end__"]:
    """Conditional edge after the consensus check."""
    return route(
        state,
        {
            "consensus": "__end__",
            "budget_exhausted": "__end__",
            "score_failed": "__end__",
            "judge": "judge",
            "next_round": "start_round",
        },
    )
