"""Tool-MAD state: the result contract plus each debater's turn in progress (streamed)."""

from __future__ import annotations

from typing import Annotated

from factdebate.nodes.state import DebateOutput, Turn


def merge_drafts(left: dict[str, Turn], right: dict[str, Turn | None]) -> dict[str, Turn]:
    """Merge per-debater drafts, right winning; a ``None`` draft is removed (turn finished)."""
    merged = {**(left or {}), **(right or {})}
    return {agent: turn for agent, turn in merged.items() if turn is not None}


class ToolMADOutput(DebateOutput, total=False):
    """What the graph streams and returns: the contract plus ``drafts``.

    ``drafts`` holds each debater's turn while the round runs (query after query
    formulation, documents after retrieval, answer and label after argue); it is part of
    the output schema so that ``langgraph dev`` and Studio stream it. The score node moves
    the finished turn into ``transcript`` and removes the draft, so a finished run's
    ``drafts`` is empty; ``factdebate.api.contract`` drops the key.
    """

    drafts: Annotated[dict[str, Turn], merge_drafts]


class ToolMADState(ToolMADOutput, total=False):
    """Tool-MAD working state: the claim, the round counter and the round's decision."""

    claim: str
    round: int
    decision: str
