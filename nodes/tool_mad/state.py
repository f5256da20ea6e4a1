"""Tool-MAD working state: the claim, the round counter and each debater's turn so far."""

from __future__ import annotations

from typing import Annotated

from nodes.state import DebateOutput, Turn, merge_dicts


class ToolMADState(DebateOutput, total=False):
    """Tool-MAD working state: the claim, the round counter and each debater's turn so far."""

    claim: str
    round: int
    drafts: Annotated[dict[str, Turn], merge_dicts]
    decision: str
