"""MAD-Fact's screen of one atomic claim: the single verifier's searches, its rating k times.

The verifier (the single-verifier baseline's own graph, handed in by ``graphs/``) searches
once; its rating is then asked ``screen_k`` times in all over the same search results, at
``screen_temperature``. The ratings are transcript turns ``screen_1`` ... ``screen_k`` of the
claim; a claim they settle gets its result from them, the others go to the jury.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import fields
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import Node, settings
from factdebate.nodes.context import Context
from factdebate.nodes.mad_fact.context import SingleVerifierContext
from factdebate.nodes.mad_fact.single_verifier import rate
from factdebate.nodes.mad_fact.state import ClaimResult, JuryState, JuryTurn
from factdebate.nodes.screening import Screened
from factdebate.nodes.state import DecidedBy
from factdebate.tools.core.records import add_costs

SCREEN_PREFIX = "screen_"


def verifier_settings(ctx: Context) -> SingleVerifierContext:
    """The single verifier's settings taken from the run's: shared fields, the screen's sampling."""
    names = {f.name for f in fields(SingleVerifierContext)}
    shared = {f.name: getattr(ctx, f.name) for f in fields(ctx) if f.name in names}
    shared["temperature"] = float(getattr(ctx, "screen_temperature"))  # noqa: B009
    if chosen := str(getattr(ctx, "screen_model", "")):
        shared["debater_model"] = chosen
    return SingleVerifierContext(**shared)


def make_claim_screen(cls: type[Context], verifier: Any) -> Node:
    """Node screening one claim: ``verifier`` (the compiled single-verifier graph), then ratings."""

    async def screen_claim(state: dict[str, Any], runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = settings(runtime, cls)
        k = int(getattr(ctx, "screen_k"))  # noqa: B009 - a field the catalog adds
        checked = verifier_settings(ctx)
        first: dict[str, Any] = await verifier.ainvoke({"claim": state["claim"]}, context=checked)
        knowledge = list(first.get("knowledge") or [])
        again = {"claim": state["claim"], "knowledge": knowledge, "steps": len(knowledge)}
        more = await asyncio.gather(
            *(rate(again, runtime.override(context=checked)) for _ in range(k - 1))  # type: ignore[arg-type]
        )
        cost, errors, turns = dict(first.get("cost") or {}), list(first.get("errors") or []), []
        ratings = [t for t in first.get("transcript") or [] if "answer" in t]
        turns += [
            JuryTurn(**{**t, "agent": "screen", "claim_id": state.get("claim_id", 0)})  # type: ignore[typeddict-item]
            for t in first.get("transcript") or []
            if "answer" not in t
        ]
        for update in more:
            ratings += [t for t in update.get("transcript", []) if "answer" in t]
            cost = add_costs(cost, update.get("cost", {}))
            errors += update.get("errors", [])
        for number, turn in enumerate(ratings, start=1):
            renamed = {**turn, "agent": f"{SCREEN_PREFIX}{number}"}
            turns.append(JuryTurn(**renamed, claim_id=state.get("claim_id", 0)))  # type: ignore[typeddict-item]
        return {"transcript": turns, "cost": cost, "errors": errors}

    return screen_claim


def screen_ratings(state: dict[str, Any]) -> list[tuple[str | None, str]]:
    """The screen's ratings of the claim (TRUE / FALSE / None), in order."""
    turns = [
        t for t in state.get("transcript", []) if str(t.get("agent", "")).startswith(SCREEN_PREFIX)
    ]
    return [(t.get("label"), str(t.get("answer") or "")) for t in turns]


def settled_claim(state: dict[str, Any]) -> dict[str, Any]:
    """The claim's result when the screen settles it: its ratings as the votes."""
    labels = [label for label, _ in screen_ratings(state) if label is not None]
    votes = Counter(labels)
    queries = [str(t.get("query")) for t in state.get("transcript", []) if t.get("query")]
    result = ClaimResult(
        claim_id=state.get("claim_id", 0),
        claim=state["claim"],
        verdict=votes.most_common(1)[0][0] if votes else None,  # type: ignore[typeddict-item]
        votes=dict(votes),
        tie_break=False,
        rounds=0,
        stop_reason="screen_agreed",
        queries=queries,
    )
    return {"claim_results": [result]}


class ScreenedClaimState(JuryState, Screened, total=False):
    """One claim's jury state plus its screen and the screen's verdict, when it settles it."""

    verdict: str | None
    justification: str
    decided_by: DecidedBy
