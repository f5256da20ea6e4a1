"""MAD-Fact claim dispatch: send claims to juries within the answer's budget, then score."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from nodes.common import budget_error, over_budget, settings
from nodes.mad_fact.context import MADFactContext
from nodes.mad_fact.state import ClaimResult, MADFactState


def unchecked(claims: list[str], start: int) -> list[ClaimResult]:
    """Results for the claims from ``start`` on that no jury will see: no verdict, budget spent."""
    return [
        ClaimResult(
            claim_id=i,
            claim=claims[i],
            verdict=None,
            votes={},
            tie_break=False,
            rounds=0,
            stop_reason="budget_exhausted",
            queries=[],
        )
        for i in range(start, len(claims))
    ]


async def dispatch(state: MADFactState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Pick the next wave: at most ``claim_concurrency`` claims not yet sent to a jury.

    One budget covers the whole answer (clerk, references and every jury): once it is
    spent, the claims not yet sent are recorded without a verdict instead of being checked.
    """
    ctx = settings(runtime, MADFactContext)
    claims, start = state.get("claim_texts", []), state.get("next_claim", 0)
    spent = over_budget(state.get("cost", {}), ctx)
    if spent and start < len(claims):
        left = unchecked(claims, start)
        note = f"{spent}; {len(left)} of {len(claims)} claims left unchecked"
        return {
            "next_claim": len(claims),
            "wave": [],
            "claim_results": left,
            "errors": [budget_error(note, agent="dispatch", round_no=0)],
        }
    end = min(len(claims), start + ctx.claim_concurrency)
    return {"next_claim": end, "wave": list(range(start, end))}


def route_claims(state: MADFactState) -> list[Send] | Literal["score"]:
    """Send the current wave of claims to juries, or score once every claim is decided."""
    claims, wave = state.get("claim_texts", []), state.get("wave", [])
    if not wave:
        return "score"
    question, spent = state.get("question", ""), state.get("cost", {})
    return [
        Send(
            "jury", {"claim": claims[i], "claim_id": i, "question": question, "spent_before": spent}
        )
        for i in wave
    ]
