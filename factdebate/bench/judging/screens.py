"""What an escalation run's screens did: how many items escalated, why, accuracy on each part."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any


def screen_of(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The screen record of a results row (escalation methods), or None."""
    result = row.get("result")
    screen = result.get("screen") if isinstance(result, dict) else None
    return screen if isinstance(screen, dict) else None


def screen_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Counts of the run's screens; None when no row has one (not an escalation run)."""
    screened = [(row, s) for row in rows if (s := screen_of(row)) is not None]
    if not screened:
        return None
    parts: dict[str, list[Mapping[str, Any]]] = {"settled": [], "escalated": []}
    for row, screen in screened:
        parts["escalated" if screen.get("escalated") else "settled"].append(row)
    return {
        "items": len(screened),
        "reasons": dict(sorted(Counter(str(s.get("reason")) for _, s in screened).items())),
        **{
            part: {
                "items": len(members),
                "right": sum(r.get("prediction") == r.get("gold") for r in members),
            }
            for part, members in parts.items()
        },
    }


def screen_lines(summary: Mapping[str, Any] | None) -> list[str]:
    """Markdown lines of ``screen_summary`` (none for a run without screens)."""
    if not summary:
        return []
    reasons = ", ".join(f"{k} {v}" for k, v in summary["reasons"].items())
    lines = ["## Screen (escalation)", "", f"Screen reasons ({summary['items']} items): {reasons}."]
    lines.append("")
    lines += ["| items | count | right |", "|---|---:|---:|"]
    for part, name in (("settled", "settled by the screen"), ("escalated", "escalated")):
        found = summary[part]
        right = f"{found['right']}/{found['items']}" if found["items"] else "-"
        lines.append(f"| {name} | {found['items']} | {right} |")
    return [*lines, ""]
