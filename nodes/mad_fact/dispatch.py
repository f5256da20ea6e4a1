"""MAD-Fact claim dispatch: send claims to juries, then hand over to scoring."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from nodes.common import settings
from nodes.mad_fact.context import MADFactContext
from nodes.mad_fact.state import MADFactState


async def dispatch(state: MADFactState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Pick the next wave: at most ``claim_concurrency`` claims not yet sent to a jury."""
    ctx = settings(runtime, MADFactContext)
    start = state.get("next_claim", 0)
    end = min(len(state.get("claim_texts", [])), start + ctx.claim_concurrency)
    return {"next_claim": end, "wave": list(range(start, end))}


def route_claims(state: MADFactState) -> list[Send] | Literal["score"]:
    """Send the current wave of claims to juries, or score once every claim is decided."""
    claims, wave = state.get("claim_texts", []), state.get("wave", [])
    if not wave:
        return "score"
    question = state.get("question", "")
    return [Send("jury", {"claim": claims[i], "claim_id": i, "question": question}) for i in wave]
