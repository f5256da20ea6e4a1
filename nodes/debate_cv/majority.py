"""Majority baseline: independent RAG-CoT voters, then the vote count under the tie rule."""

from __future__ import annotations

from collections import Counter
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from nodes.common import model_for, settings
from nodes.debate_cv.context import MajorityContext
from nodes.debate_cv.rag_cot import cot_turn
from nodes.debate_cv.state import RAGCoTState, VotePayload

TIE_VERDICT = "NOT ENOUGH INFO"


def tally(votes: list[str | None]) -> tuple[str | None, str, dict[str, int]]:
    """Apply the vote rule: ``(verdict, stop_reason, counts)``."""
    counts = Counter(v for v in votes if v is not None)
    if not counts:
        return None, "no_votes", {}
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return TIE_VERDICT, "majority_tie", dict(counts)
    return ranked[0][0], "majority", dict(counts)


def fan_out(state: RAGCoTState, runtime: Runtime[MajorityContext]) -> list[Send]:
    """One ``vote`` task per voter, all on the same evidence."""
    ctx = settings(runtime, MajorityContext)
    return [
        Send("vote", VotePayload(claim=state["claim"], evidence=state.get("evidence", []), voter=i))
        for i in range(1, ctx.voters + 1)
    ]


async def vote(state: VotePayload, runtime: Runtime[MajorityContext]) -> dict[str, Any]:
    """One independent RAG-CoT answer."""
    ctx = settings(runtime, MajorityContext)
    model = await model_for(ctx, "debater")
    turn, cost, errors = await cot_turn(
        model, state["claim"], state["evidence"], ctx, f"voter_{state['voter']}"
    )
    return {"votes": [turn], "transcript": [turn], "cost": cost, "errors": errors}


async def count_votes(state: RAGCoTState, runtime: Runtime[MajorityContext]) -> dict[str, Any]:
    """Count the votes under the tie rule."""
    votes = sorted(state.get("votes", []), key=lambda t: t.get("agent", ""))
    verdict, reason, counts = tally([t.get("label") for t in votes])
    shown = ", ".join(f"{label} x{n}" for label, n in sorted(counts.items())) or "none readable"
    note = {
        "majority": "majority",
        "majority_tie": f"tie, so {TIE_VERDICT}",
        "no_votes": "no verdict",
    }[reason]
    lines = [f"Votes: {shown} ({note})."]
    lines += [f"{t.get('agent')}: {t.get('answer', '')}" for t in votes]
    return {
        "verdict": verdict,
        "stop_reason": reason,
        "rounds": 1,
        "justification": "\n\n".join(lines),
    }
