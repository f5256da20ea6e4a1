"""What an escalation's screen read, how far its labels agree and why it went on or not."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

ScreenReason = Literal["agreed", "disagreed", "unreadable", "screen_all"]
"""Why the screen stopped (``agreed``) or handed the item on to the method."""
SCREEN_STOP = "screen_agreed"
"""The stop reason of an item the screen settled."""


class ScreenRecord(TypedDict, total=False):
    """One item's screen: its labels, their agreement, and whether and why it escalated."""

    labels: list[str | None]  # one per screen answer, in order (None: unreadable)
    verdict: str | None  # the most frequent readable label (a tie: the earliest)
    agreement: float  # the share of all screen answers giving ``verdict``
    share: float  # the agreement the rule asks for to stop
    escalated: bool
    reason: ScreenReason
    model: str  # the model that made the screen's answers
    llm_calls: int  # model requests made up to the end of the screen
    tokens: int  # input + output tokens up to the end of the screen
    detail: str


class Screened(TypedDict, total=False):
    """The state key an escalation graph adds to its method's state and output."""

    screen: ScreenRecord
