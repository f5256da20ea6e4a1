"""Consensus check: stop when the debaters agree and (optionally) both answers score well."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from graphs.context import ToolMADContext
from graphs.state import ErrorRecord, ToolMADState, Turn
from nodes.common import over_budget, settings, turn_of
from nodes.rounds import DEBATERS

Decision = Literal["consensus", "next_round", "judge", "budget_exhausted"]


def is_stable(turn: Turn, ctx: ToolMADContext) -> bool:
    """Both scores present and over their thresholds (faithfulness only for tool users).

    A score that could not be computed (None) never passes.
    """
    relevance = turn.get("answer_relevance")
    if relevance is None or relevance < ctx.relevance_threshold:
        return False
    if turn.get("tool") == "none":
        return True
    faithfulness = turn.get("faithfulness")
    return faithfulness is not None and faithfulness >= ctx.faithfulness_threshold


def decide(turns: list[Turn], round_no: int, ctx: ToolMADContext) -> Decision:
    """Pure decision rule of one finished round."""
    labels = {turn.get("label") for turn in turns}
    agreed = len(turns) == len(DEBATERS) and len(labels) == 1 and None not in labels
    stable = not ctx.stability_score or all(is_stable(turn, ctx) for turn in turns)
    if agreed and stable:
        return "consensus"
    return "judge" if round_no >= ctx.max_rounds else "next_round"


async def consensus_check(state: ToolMADState, runtime: Runtime[ToolMADContext]) -> dict[str, Any]:
    """Record the round's decision; on consensus the shared label becomes the verdict."""
    ctx = settings(runtime, ToolMADContext)
    round_no = state["round"]
    turns = [t for a in DEBATERS if (t := turn_of(state.get("transcript", []), a, round_no))]
    decision: Decision = decide(turns, round_no, ctx)
    spent = over_budget(state.get("cost", {}), ctx)
    update: dict[str, Any] = {"decision": decision}
    if decision != "consensus" and spent:
        return {
            "decision": "budget_exhausted",
            "verdict": None,
            "stop_reason": "budget_exhausted",
            "justification": f"Stopped before a verdict: {spent}.",
            "errors": [
                ErrorRecord(
                    round=round_no,
                    agent="consensus_check",
                    stage="budget",
                    kind="budget_exhausted",
                    message=spent,
                )
            ],
        }
    if decision == "consensus":
        best = max(
            turns, key=lambda t: (t.get("faithfulness") or 0.0) + (t.get("answer_relevance") or 0.0)
        )
        update.update(
            verdict=turns[0]["label"],
            stop_reason="consensus",
            justification=f"Both debaters concluded {turns[0]['label']} in round {round_no}. "
            f"{best.get('agent')}: {best.get('answer', '')}".strip(),
        )
    return update


def route_after_check(state: ToolMADState) -> Literal["start_round", "judge", "__end__"]:
    """Conditional edge after the consensus check."""
    decision = state.get("decision")
    if decision in ("consensus", "budget_exhausted"):
        return "__end__"
    return "judge" if decision == "judge" else "start_round"
