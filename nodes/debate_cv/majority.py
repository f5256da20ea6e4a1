"""Majority baseline: independent RAG-CoT voters, then a voting step (a model, or a count)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from factdebate.nodes.common import model_for, settings
from factdebate.nodes.debate_cv.context import MajorityContext
from factdebate.nodes.debate_cv.rag_cot import cot_turn, label_set
from factdebate.nodes.debate_cv.state import RAGCoTState, VotePayload
from factdebate.nodes.evidence_block import sanitize
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import debate_cv as prompts

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


def render_votes(votes: list[Turn], max_chars: int) -> str:
    """Each voter's reasoning and label for the voting prompt (model text: sanitised)."""
    return "\n\n".join(
        f'<vote agent="{t.get("agent")}" label="{t.get("label") or "unreadable"}">\n'
        f"{sanitize(str(t.get('answer') or '(no answer)'), max_chars)}\n</vote>"
        for t in votes
    )


async def count_votes(state: RAGCoTState, runtime: Runtime[MajorityContext]) -> dict[str, Any]:
    """Record the tally; under ``voting='model'`` a model reads the votes and decides."""
    ctx = settings(runtime, MajorityContext)
    votes = sorted(state.get("votes", []), key=lambda t: t.get("agent", ""))
    verdict, reason, counts = tally([t.get("label") for t in votes])
    unread = sum(t.get("label") is None for t in votes)
    shown = ", ".join(f"{label} x{n}" for label, n in sorted(counts.items())) or "none readable"
    shown += f", unreadable x{unread}" if unread else ""
    note = {
        "majority": "majority",
        "majority_tie": "tie" if ctx.voting == "model" else f"tie, so {TIE_VERDICT}",
        "no_votes": "no readable vote",
    }[reason]
    lines = [f"Votes: {shown} ({note})."]
    update: dict[str, Any] = {"rounds": 1}
    if ctx.voting == "model":
        labels, instructions = label_set(ctx)
        prompt = prompts.VOTING.format(
            claim=state["claim"],
            votes=render_votes(votes, ctx.max_doc_chars),
            label_instructions=instructions,
        )
        model = await model_for(ctx, "judge")
        reply = await ask_label(
            model, prompt, ctx.site(role="judge", agent="vote_counter", stage="vote"), labels=labels
        )
        verdict = reply.label
        update.update(cost=reply.cost, errors=reply.errors)
        if verdict is None:
            reason = "vote_unparseable"
        lines.append(without_label(reply.text) or "(no answer)")
    who = "vote_counter" if ctx.voting == "model" else "count"
    how = "a model read the votes" if ctx.voting == "model" else "the votes were counted"
    update.update(
        verdict=verdict,
        stop_reason=reason,
        justification="\n\n".join(lines),
        decided_by=decided(who, 1, reason, f"{lines[0]} Then {how}."),
    )
    return update
