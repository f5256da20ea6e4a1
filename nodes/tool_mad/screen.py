"""Round 1 read as a screen: both debaters' first answers, and closing them unscored."""

from __future__ import annotations

from typing import Any

from factdebate.nodes.screening import Screened
from factdebate.nodes.state import Turn
from factdebate.nodes.tool_mad.rounds import DEBATERS
from factdebate.nodes.tool_mad.state import ToolMADOutput, ToolMADState


def first_answers(state: ToolMADState) -> list[tuple[str | None, str]]:
    """Each debater's round-1 label and answer, debater A first (before any scoring)."""
    drafts = state.get("drafts", {})
    return [
        (drafts.get(agent, {}).get("label"), str(drafts.get(agent, {}).get("answer") or ""))
        for agent in DEBATERS
    ]


def close_unscored(state: ToolMADState) -> dict[str, Any]:
    """Move both drafts into the transcript without scores (the screen settled the item)."""
    drafts = state.get("drafts", {})
    turns = [
        Turn(**{**drafts[agent], "faithfulness": None, "answer_relevance": None})
        for agent in DEBATERS
        if agent in drafts
    ]
    return {"transcript": turns, "drafts": dict.fromkeys(DEBATERS)}


class EscalateToolMADOutput(ToolMADOutput, Screened, total=False):
    """Tool-MAD's output plus the screen's record."""


class EscalateToolMADState(ToolMADState, Screened, total=False):
    """Tool-MAD's state plus the screen's record."""
