"""A review bench's items by review state: scores count decided verdicts, others await a person."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from factdebate.bench.judging.scoring import llm_calls, tokens

PENDING = "pending"
"""``review.status`` of an item whose verdict a person has not decided (nodes/review.py)."""


def awaiting_review(row: Mapping[str, Any]) -> bool:
    """Whether a result row's verdict is a proposal still waiting for a person's decision."""
    review = row.get("review")
    return isinstance(review, Mapping) and review.get("status") == PENDING


def decided_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows a report scores: every row but those awaiting review (a proposal is no verdict)."""
    return [r for r in rows if not awaiting_review(r)]


def review_counts(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``review``: how many items await a person and how many were decided (only where any await).

    Also the model calls and tokens the waiting items spent, which the scored rows' cost leaves
    out. Empty when no item awaits review.
    """
    waiting = [r for r in rows if awaiting_review(r)]
    if not waiting:
        return {}
    reviewed = sum(isinstance(r.get("review"), Mapping) for r in rows) - len(waiting)
    return {
        "review": {
            "items": len(rows),
            "awaiting": len(waiting),
            "decided": len(rows) - len(waiting),
            "reviewed": reviewed,
            "awaiting_llm_calls": sum(llm_calls(r) for r in waiting),
            "awaiting_tokens": sum(tokens(r) for r in waiting),
        }
    }


def review_words(metrics: Mapping[str, Any]) -> str:
    """One sentence on the items awaiting review (empty when none awaits)."""
    review = metrics.get("review")
    if not isinstance(review, Mapping) or not review.get("awaiting"):
        return ""
    awaiting, items, decided = review["awaiting"], review["items"], review["decided"]
    return (
        f"{awaiting} of {items} verdicts await a person's review and are not scored: every "
        f"score, count and cost here is over the {decided} decided item"
        f"{'' if decided == 1 else 's'} (the waiting ones spent {review['awaiting_llm_calls']} "
        f"model calls, {review['awaiting_tokens']} tokens). Decide them with factdebate review "
        "RUN_DIR; the report is written again with each decision."
    )


def review_lines(metrics: Mapping[str, Any]) -> list[str]:
    """The report's lines on the items awaiting review (none when none awaits)."""
    words = review_words(metrics)
    return [f"**Awaiting review:** {words}", ""] if words else []
