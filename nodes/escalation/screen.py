"""The screen's check and the edges around it: settle the item, or hand it to the method proper.

The method's graph hands in how to read the screen's answers and how to close them when the
screen settles the item (``graphs/`` wires them), so this room knows no method's state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import Node, RoutingError, settings
from factdebate.nodes.context import Context
from factdebate.nodes.escalation.rule import screen_reason, top_label
from factdebate.nodes.labelled import without_label
from factdebate.nodes.screening import SCREEN_STOP, ScreenReason, ScreenRecord
from factdebate.nodes.state import decided

Answers = Callable[[Any], list[tuple[str | None, str]]]
"""The screen's answers in a state: ``(label, answer text)`` each, in order."""
Finish = Callable[[Any], dict[str, Any]]
"""The update that closes the screen's answers when the screen settles the item."""
AGENT = "screen"
STOP, ESCALATE = "stop", "escalate"
WHY: dict[ScreenReason, str] = {
    "agreed": "the screen settled the item",
    "disagreed": "the screen's labels disagree, so the method proper runs",
    "unreadable": "no screen answer could be read, so the method proper runs",
    "screen_all": "the screen would settle the item, but screen_all runs the method proper too",
}


def screen_model(ctx: Context, role: str = "debater") -> str:
    """The model of the screen's answers: ``screen_model``, else ``role``'s model."""
    return str(getattr(ctx, "screen_model", "") or ctx.model_for(role))


def describe(labels: Sequence[str | None], share: float, reason: ScreenReason) -> str:
    """The screen's outcome in one line: its labels, their agreement, and what followed."""
    shown = ", ".join(label or "unreadable" for label in labels)
    _, agreement = top_label(labels)
    return (
        f"Screen labels: {shown} (agreement {agreement:.0%}; the rule asks {share:.0%}): "
        f"{WHY[reason]}."
    )


def screen_record(
    labels: Sequence[str | None], ctx: Context, cost: dict[str, Any] | None
) -> ScreenRecord:
    """The record of one screen under ``ctx``'s rule, with the spending up to it."""
    share = float(getattr(ctx, "screen_share"))  # noqa: B009 - a field the catalog adds
    reason = screen_reason(labels, share, bool(getattr(ctx, "screen_all", False)))
    verdict, agreement = top_label(labels)
    total = (cost or {}).get("total") or {}
    return ScreenRecord(
        labels=list(labels),
        verdict=verdict,
        agreement=round(agreement, 4),
        share=share,
        escalated=reason != "agreed",
        reason=reason,
        model=screen_model(ctx),
        llm_calls=int(total.get("llm_calls", 0)),
        tokens=int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0)),
        detail=describe(labels, share, reason),
    )


def make_screen_check(cls: type[Context], answers: Answers, finish: Finish) -> Node:
    """Node judging the screen's answers; when they settle the item it gives the verdict."""

    async def screen_check(state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = settings(runtime, cls)
        pairs = answers(state)
        record = screen_record([label for label, _ in pairs], ctx, state.get("cost"))
        update: dict[str, Any] = {
            "screen": record,
            "decision": ESCALATE if record["escalated"] else STOP,
        }
        if not record["escalated"]:
            text = next(text for label, text in pairs if label == record["verdict"])
            update.update(
                finish(state),
                verdict=record["verdict"],
                justification=without_label(text),
                stop_reason=SCREEN_STOP,
                decided_by=decided(
                    AGENT, int(state.get("round") or 0), SCREEN_STOP, record["detail"]
                ),
            )
        return update

    return screen_check


def make_screen_router(escalate: str | list[str], stop: str) -> Callable[[Any], str | list[str]]:
    """Conditional edge after the screen: ``stop`` when it settled the item, else ``escalate``."""

    def after_screen(state: Any) -> str | list[str]:
        decision = state.get("decision")
        if decision == STOP:
            return stop
        if decision == ESCALATE:
            return escalate
        raise RoutingError(f"unexpected decision {decision!r}; expected {STOP} or {ESCALATE}")

    return after_screen


def first_round_to(screen: str, target: str) -> Callable[[Any], str]:
    """Conditional edge sending round 1 to ``screen`` and every later round to ``target``."""

    def after_step(state: Any) -> str:
        return screen if int(state.get("round") or 1) == 1 else target

    return after_step


def with_screen_model(node: Any, cls: type[Context]) -> Node:
    """``node`` whose first round runs under ``screen_model`` as the debaters' model, if set."""

    async def screened(state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = settings(runtime, cls)
        chosen = str(getattr(ctx, "screen_model", ""))
        if chosen and int(state.get("round") or 1) == 1:
            runtime = runtime.override(context=dataclasses.replace(ctx, debater_model=chosen))
        result: dict[str, Any] = await node(state, runtime=runtime)
        return result

    screened.__name__ = getattr(node, "__name__", "screened")
    return screened
