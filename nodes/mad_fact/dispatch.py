"""MAD-Fact claim dispatch: every claim to its own jury, in a rolling pool, within one budget."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal
from weakref import WeakValueDictionary

from langgraph.runtime import Runtime
from langgraph.types import Send

from factdebate.nodes.common import budget_error, over_budget, run_semaphore, settings
from factdebate.nodes.mad_fact.context import MADFactContext
from factdebate.nodes.mad_fact.state import ClaimResult, ClaimTask, JuryInput, MADFactState
from factdebate.tools.core.records import RoleCost, add_costs


def route_claims(state: MADFactState) -> list[Send] | Literal["score"]:
    """Send every claim to a jury at once (the pool limits how many run), or go to scoring."""
    claims = state.get("claim_texts", [])
    if not claims:
        return "score"
    question, spent = state.get("question", ""), state.get("cost", {})
    return [
        Send(
            "jury",
            ClaimTask(
                claim=claim,
                claim_id=i,
                question=question,
                run_key=state["run_key"],
                spent_before=spent,
            ),
        )
        for i, claim in enumerate(claims)
    ]


class Ledger:
    """What one run's juries have spent so far (shared by its claims)."""

    def __init__(self) -> None:
        self.cost: dict[str, RoleCost] = {}


# One ledger per run key, alive while any claim of that run is waiting or running.
_LEDGERS: WeakValueDictionary[str, Ledger] = WeakValueDictionary()


def run_ledger(run_key: str) -> Ledger:
    """The spending ledger of one run, made on first use."""
    ledger = _LEDGERS.get(run_key)
    if ledger is None:
        ledger = Ledger()
        _LEDGERS[run_key] = ledger
    return ledger


def unchecked(task: ClaimTask, spent: str) -> dict[str, Any]:
    """The result of a claim no jury will see because the answer's budget is spent."""
    result = ClaimResult(
        claim_id=task["claim_id"],
        claim=task["claim"],
        verdict=None,
        votes={},
        tie_break=False,
        rounds=0,
        stop_reason="budget_exhausted",
        queries=[],
    )
    note = f"{spent}; claim {task['claim_id']} left unchecked"
    return {
        "claim_results": [result],
        "errors": [budget_error(note, agent="dispatch", round_no=0)],
    }


def pooled(jury: Any) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Wrap the compiled jury graph so a run's claims share a rolling pool and one budget.

    Every claim is its own task from the start; a claim starts its jury as soon as any
    earlier one finishes (``claim_concurrency`` slots per run), instead of waves that wait
    for their slowest claim. One budget covers the whole answer: a claim whose turn comes
    after the spending (clerk, references and every finished jury) reached it is recorded
    without a verdict; a running jury stops at its next round once the budget is spent.
    ``jury`` is the compiled jury subgraph (built in ``graphs/``).
    """

    async def jury_pool(task: ClaimTask, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
        ctx = settings(runtime, MADFactContext)
        ledger = run_ledger(task["run_key"])
        async with run_semaphore(task["run_key"], ctx.claim_concurrency):
            before = add_costs(task.get("spent_before", {}), ledger.cost)
            spent = over_budget(before, ctx)
            if spent:
                return unchecked(task, spent)
            payload = JuryInput(
                claim=task["claim"],
                claim_id=task["claim_id"],
                question=task["question"],
                spent_before=before,
            )
            result: dict[str, Any] = await jury.ainvoke(payload, context=ctx)
            ledger.cost = add_costs(ledger.cost, result.get("cost", {}))
        return result

    return jury_pool
