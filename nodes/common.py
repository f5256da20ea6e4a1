"""Helpers every node uses: read the runtime settings, get a role's model, find turns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol, TypeVar
from weakref import WeakValueDictionary

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from factdebate.nodes.context import Context
from factdebate.nodes.evidence_block import quote_answer
from factdebate.nodes.state import Turn, decided
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import ErrorRecord, RoleCost
from factdebate.tools.models.providers import loaded_model, resolve_model, with_seed

C = TypeVar("C", bound=Context)


class Node(Protocol):
    """A node taking the state and the runtime (typed so ``add_node`` accepts factories)."""

    def __call__(self, state: Any, *, runtime: Runtime[Any]) -> Awaitable[dict[str, Any]]:
        """Run the node."""
        ...


def settings(runtime: Runtime[Any], cls: type[C]) -> C:
    """The run's settings as ``cls``: defaults when none were given, dicts converted."""
    ctx = runtime.context
    if isinstance(ctx, cls):
        return ctx
    if ctx is None:
        return cls()
    if isinstance(ctx, dict):
        return cls.from_settings(ctx)
    raise TypeError(f"expected {cls.__name__} settings, got {type(ctx).__name__}")


async def model_for(ctx: Context, role: str, spec: str = "") -> BaseChatModel:
    """The chat model configured for ``role`` (or ``spec``): loaded once, off the event loop.

    A model that is already loaded is returned at once (a thread hop per call costs more
    than the rest of an instant call).
    """
    spec = spec or ctx.model_for(role)
    limits: dict[str, Any] = {
        "temperature": ctx.temperature,
        "max_tokens": ctx.max_output_tokens,
        "timeout": ctx.call_timeout_s,
        "top_p": ctx.top_p,
    }
    model = loaded_model(spec, **limits)
    if model is None:
        model = await asyncio.to_thread(resolve_model, spec, **limits)
    if ctx.sampling_seed < 0:
        return model
    seeded: BaseChatModel = with_seed(model, ctx.sampling_seed)  # a copy, made once per seed
    return seeded


def turn_of(transcript: list[Turn], agent: str, round_no: int) -> Turn | None:
    """The turn ``agent`` took in ``round_no``, if any."""
    for turn in reversed(transcript):
        if turn.get("agent") == agent and turn.get("round") == round_no:
            return turn
    return None


def answer_or_placeholder(turn: Turn | None, max_chars: int) -> str:
    """An agent's answer for quoting in another's prompt (sanitised, capped), or a placeholder."""
    return quote_answer(turn.get("answer") if turn else None, max_chars)


def over_budget(cost: dict[str, RoleCost], ctx: Context) -> str | None:
    """Which per-claim budget the spending so far has reached, if any."""
    total = cost.get("total") if cost else None
    if not total:
        return None
    tokens = total["input_tokens"] + total["output_tokens"]
    usd = (
        total["input_tokens"] * ctx.usd_per_million_input
        + total["output_tokens"] * ctx.usd_per_million_output
    ) / 1e6
    if ctx.max_llm_calls and total["llm_calls"] >= ctx.max_llm_calls:
        return f"{total['llm_calls']} LLM calls reached the budget of {ctx.max_llm_calls}"
    if ctx.max_total_tokens and tokens >= ctx.max_total_tokens:
        return f"{tokens} tokens reached the budget of {ctx.max_total_tokens}"
    if ctx.max_usd and usd >= ctx.max_usd:
        return f"${usd:.4f} reached the budget of ${ctx.max_usd:.4f}"
    return None


def budget_error(spent: str, *, agent: str, round_no: int) -> ErrorRecord:
    """The error record of a run stopped because its budget is spent."""
    return ErrorRecord(
        round=round_no, agent=agent, stage="budget", kind="budget_exhausted", message=spent
    )


def budget_stop(spent: str, *, agent: str, round_no: int) -> dict[str, Any]:
    """The update that ends a debate without a verdict because its budget is spent."""
    return {
        "verdict": None,
        "stop_reason": "budget_exhausted",
        "justification": f"Stopped before a verdict: {spent}.",
        "decided_by": decided(agent, round_no, "budget_exhausted", f"Budget spent: {spent}."),
        "errors": [budget_error(spent, agent=agent, round_no=round_no)],
    }


# One limiter per run key, alive while any task of that run holds it: runs batched side by
# side (``abatch``) each get their own cap.
_SEMAPHORES: WeakValueDictionary[str, asyncio.Semaphore] = WeakValueDictionary()


def run_semaphore(run_key: str, limit: int) -> asyncio.Semaphore:
    """The concurrency limiter of one run (e.g. its parallel agents), made on first use."""
    sem = _SEMAPHORES.get(run_key)
    if sem is None:
        sem = asyncio.Semaphore(limit)
        _SEMAPHORES[run_key] = sem
    return sem


R = TypeVar("R", bound=str)


class RoutingError(FactDebateError, RuntimeError):
    """A node left a decision its router does not know: a bug, never a silent extra round."""


def route(state: Mapping[str, Any], table: Mapping[str, R]) -> R:
    """The next node for the ``decision`` a node wrote into ``state``; unknown ones raise."""
    decision = state.get("decision")
    if not isinstance(decision, str) or decision not in table:
        raise RoutingError(f"unexpected decision {decision!r}; expected one of {sorted(table)}")
    return table[decision]
