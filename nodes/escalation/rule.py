"""The screen's confidence rule: the top label's share of the screen's answers against a bound."""

from __future__ import annotations

from collections.abc import Sequence

from factdebate.nodes.screening import ScreenReason


def top_label(labels: Sequence[str | None]) -> tuple[str | None, float]:
    """The most frequent readable label (a tie: the earliest) and its share of all labels."""
    counts: dict[str, int] = {}
    for label in labels:
        if label is not None:
            counts[label] = counts.get(label, 0) + 1
    if not counts:
        return None, 0.0
    best = max(counts.values())
    winner = next(label for label in counts if counts[label] == best)
    return winner, best / len(labels)


def screen_reason(labels: Sequence[str | None], share: float, screen_all: bool) -> ScreenReason:
    """Why the screen stops (``agreed``) or escalates, under ``share`` and ``screen_all``."""
    winner, agreement = top_label(labels)
    if winner is None:
        return "unreadable"
    if agreement + 1e-9 < share:
        return "disagreed"
    return "screen_all" if screen_all else "agreed"
