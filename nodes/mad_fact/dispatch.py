"""MAD-Fact claim dispatch: every claim to its own jury, at most ``claim_concurrency`` at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from nodes.common import run_semaphore, settings
from nodes.mad_fact.context import MADFactContext
from nodes.mad_fact.state import ClaimTask, JuryInput, MADFactState


def route_claims(state: MADFactState) -> list[Send] | Literal["score"]:
    """Send every claim to a jury at once (the pool limits how many run), or go to scoring."""
    claims = state.get("claim_texts", [])
    if not claims:
        return "score"
    question = state.get("question", "")
    return [
        Send(
            "jury",
            ClaimTask(claim=claim, claim_id=i, question=question, run_key=state["run_key"]),
        )
        for i, claim in enumerate(claims)
    ]


def pooled(jury: Any) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Wrap the compiled jury graph so a run's claims share a rolling pool of slots.

    Every claim is its own task from the start; a claim starts its jury as soon as any
    earlier one finishes (``claim_concurrency`` slots per run), instead of waves that wait
    for their slowest claim. ``jury`` is the compiled jury subgraph (built in ``graphs/``).
    """

    async def jury_pool(task: ClaimTask, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
        ctx = settings(runtime, MADFactContext)
        payload = JuryInput(
            claim=task["claim"], claim_id=task["claim_id"], question=task["question"]
        )
        async with run_semaphore(task["run_key"], ctx.claim_concurrency):
            result: dict[str, Any] = await jury.ainvoke(payload, context=ctx)
        return result

    return jury_pool
