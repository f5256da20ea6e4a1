"""Round bookkeeping: validate the input once, then open each round for both debaters."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import settings
from factdebate.nodes.state import Turn
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.state import ToolMADState
from factdebate.tools.core.errors import SettingsError

DEBATERS = ("debater_a", "debater_b")


def tool_of(ctx: ToolMADContext, agent: str) -> str:
    """The tool a debater uses under the current settings."""
    return ctx.tool_a if agent == "debater_a" else ctx.tool_b


async def start_round(state: ToolMADState, runtime: Runtime[ToolMADContext]) -> dict[str, Any]:
    """Open the next round; on the first, check the claim and the settings."""
    ctx = settings(runtime, ToolMADContext)
    round_no = state.get("round", 0) + 1
    update: dict[str, Any] = {"round": round_no, "rounds": round_no}
    if round_no == 1:
        if ctx.max_rounds < 1:
            raise SettingsError(f"max_rounds must be at least 1, got {ctx.max_rounds}")
        update["claim"] = clean_claim(state.get("claim"), ctx.max_claim_chars)
    update["drafts"] = {
        agent: Turn(round=round_no, agent=agent, tool=tool_of(ctx, agent)) for agent in DEBATERS
    }
    return update
