"""What a run answered and what it paid for: the report's lines on coverage and the bill."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def coverage_lines(metrics: Mapping[str, Any]) -> list[str]:
    """How many items were answered: the scores are over those, a failed item is not wrong."""
    if "coverage" not in metrics:  # a run scored before coverage was recorded
        return []
    n, answered = int(metrics["n"]), int(metrics["answered"])
    line = f"Coverage {100 * metrics['coverage']:.1f}%: {answered} of {n} items answered"
    if answered == n:
        return [f"{line}.", ""]
    return [
        f"{line}; the scores are over those {answered}. {n - answered} failed (their model calls "
        "brought no reply, or their run raised): a fault, not a wrong answer; the same command "
        "retries them.",
        "",
    ]


def bill_lines(cost: Mapping[str, Any], run: Mapping[str, Any]) -> list[str]:
    """Attempts retried apart from the calls, calls no row holds, and the items a rerun retried."""
    lines: list[str] = []
    if cost.get("rejected"):
        lines.append(
            f"{cost['rejected']} more requests were refused or failed and then retried (429s, "
            "5xx, cut hangs): sent to the provider, not counted as calls."
        )
    outside = run.get("outside_rows") or {}
    if outside.get("cut_off_requests"):
        lines.append(
            f"The totals include {outside['cut_off_requests']} requests sent for "
            f"{outside['cut_off_items']} items cut off before their row was written (a kill; "
            "from the call journal, calls.jsonl)."
        )
    if outside.get("connection_checks"):
        lines.append(
            f"The totals include {outside['connection_checks']} connection checks (one tiny "
            "request per remote model before each invocation, role `check`)."
        )
    if outside.get("retried_rows"):
        lines.append(
            f"The totals include the calls of {outside['retried_rows']} earlier failed tries "
            "that reruns replaced (retried.jsonl)."
        )
    retried = run.get("retried") or {}
    if retried.get("items"):
        lines.append(
            f"This run retried {retried['items']} items that had failed before: "
            f"{retried['still_failed']} still failed."
        )
    return [f"{line}\n" for line in lines]
