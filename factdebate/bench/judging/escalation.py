"""The escalation rule chosen from finished runs: the screen's agreement that may settle an item.

Reads runs of an escalation method made with ``screen_all`` (every item has the screen's
labels, its cost up to the screen, and the method proper's verdict and cost), so the outcome
of any rule is known for every item without running anything:

* A **rule** is a share ``s`` (``screen_share``): an item whose screen labels agree at least
  ``s`` (the top readable label's share of all of them) is settled by the screen (its label,
  the screen's calls); every other item takes the method proper's verdict and calls. The
  candidates are the shares the runs show, from 0.5 up, and ``never`` (always the method).
* **Criterion**: the rule with the largest saving in calls whose accuracy is within one item
  per 50 of the method proper's (at most ``items / 50`` more wrong items); ties go to the
  higher share.
* **Held out**: each claim is scored under the rule chosen on all *other* claims (leave one
  claim out; a claim's repeats leave together), with 95 % bootstrap intervals over claims, as
  ``calibrate-gate`` does (``calibration.held_out``): a rule read off the same claims it is
  scored on looks better than it is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factdebate.bench.judging.calibration import CalibrationError, _span, result_rows
from factdebate.bench.judging.stats import Interval, mean_interval

TOLERANCE = 1 / 50
"""How much accuracy a rule may lose against the method proper: one item per 50."""
NEVER = 2.0
"""The share of the rule that never lets the screen settle an item (always the method)."""
LOWEST_SHARE = 0.5


@dataclass(frozen=True)
class ScreenedItem:
    """One item of a ``screen_all`` run: the screen's outcome and the method proper's."""

    item: str
    gold: str
    agreement: float  # 0 when no screen label could be read
    screen_verdict: str | None
    screen_calls: int
    screen_tokens: int
    verdict: str | None
    calls: int
    tokens: int


@dataclass(frozen=True)
class RuleEffect:
    """Accuracy and cost of the items under one rule."""

    share: float
    items: int
    right: int
    calls: float  # per item
    tokens: float  # per item
    settled: int  # items the screen settled

    @property
    def name(self) -> str:
        """The rule as ``screen_share`` writes it."""
        return (
            "never (the method on every item)" if self.share > 1 else f"screen_share={self.share:g}"
        )


@dataclass(frozen=True)
class HeldOutRule:
    """The leave-one-claim-out estimate of the criterion's rule."""

    claims: int
    accuracy: Interval
    calls: Interval
    shares: tuple[float, float]  # lowest and highest share chosen over the folds


def screened_item(row: dict[str, Any]) -> ScreenedItem | None:
    """One row's outcomes; None for a row without a screen record (another method, failed)."""
    result = row.get("result")
    screen = result.get("screen") if isinstance(result, dict) else None
    if not isinstance(screen, dict) or not isinstance(result, dict):
        return None
    if screen.get("reason") == "agreed":
        raise CalibrationError(
            f"item {row.get('id')!r} was settled by its screen, so the method proper's outcome "
            "is unknown: calibrate on runs made with --set screen_all=true"
        )
    total = (result.get("cost") or {}).get("total") or {}
    readable = [label for label in screen.get("labels") or [] if label is not None]
    return ScreenedItem(
        item=str(row.get("id", "")),
        gold=str(row.get("gold")),
        agreement=float(screen.get("agreement") or 0.0) if readable else 0.0,
        screen_verdict=screen.get("verdict"),
        screen_calls=int(screen.get("llm_calls") or 0),
        screen_tokens=int(screen.get("tokens") or 0),
        verdict=row.get("prediction", result.get("verdict")),
        calls=int(total.get("llm_calls") or 0),
        tokens=int(total.get("input_tokens") or 0) + int(total.get("output_tokens") or 0),
    )


def read_screened(
    run_dirs: Sequence[Path], skip_bad_rows: bool = False, skipped: list[str] | None = None
) -> list[ScreenedItem]:
    """The screened items of every run folder (``--repeats`` folders: every repeat).

    Raises:
        CalibrationError: a folder without results, an item settled without ``screen_all``,
            or no item with a screen record.
    """
    rows = result_rows(run_dirs, skip_bad_rows, skipped)
    items = [item for row in rows if (item := screened_item(row)) is not None]
    if not items:
        raise CalibrationError(
            "no item with a screen record in those runs: give runs of an escalation method "
            "(escalate-*) made with --set screen_all=true"
        )
    return items


def settles(item: ScreenedItem, share: float) -> bool:
    """Whether the rule of ``share`` lets the screen settle ``item``."""
    return item.screen_verdict is not None and item.agreement + 1e-9 >= share


def effect(items: Sequence[ScreenedItem], share: float) -> RuleEffect:
    """Accuracy and cost per item of ``items`` under the rule of ``share``."""
    right = calls = tokens = settled = 0
    for item in items:
        if settles(item, share):
            settled += 1
            right += item.screen_verdict == item.gold
            calls += item.screen_calls
            tokens += item.screen_tokens
        else:
            right += item.verdict == item.gold
            calls += item.calls
            tokens += item.tokens
    n = max(len(items), 1)
    return RuleEffect(share, len(items), right, calls / n, tokens / n, settled)


def candidates(items: Sequence[ScreenedItem]) -> list[float]:
    """The shares worth trying: every agreement the items show from 0.5 up, and never."""
    shown = {round(i.agreement, 4) for i in items if i.agreement >= LOWEST_SHARE}
    return sorted(shown) + [NEVER]


def choose(items: Sequence[ScreenedItem]) -> RuleEffect:
    """The criterion's rule: largest saving within one item per 50 of the method's accuracy."""
    full = effect(items, NEVER)
    allowed = [
        found
        for share in candidates(items)
        if full.right - (found := effect(items, share)).right <= len(items) * TOLERANCE + 1e-9
    ]
    return min(allowed, key=lambda e: (e.calls, -e.share))


def held_out(items: Sequence[ScreenedItem]) -> HeldOutRule:
    """Each claim scored under the rule chosen without it (see the module docstring).

    Raises:
        CalibrationError: fewer than two claims.
    """
    by_claim: dict[str, list[ScreenedItem]] = defaultdict(list)
    for item in items:
        by_claim[item.item].append(item)
    if len(by_claim) < 2:
        raise CalibrationError("a held-out estimate needs at least two claims")
    right: list[float] = []
    calls: list[float] = []
    shares: list[float] = []
    for claim, own in by_claim.items():
        others = [i for c, rows in by_claim.items() if c != claim for i in rows]
        share = choose(others).share
        shares.append(share)
        scored = effect(own, share)
        right.append(scored.right / len(own))
        calls.append(scored.calls)
    repeats = max(len(own) for own in by_claim.values())
    return HeldOutRule(
        claims=len(by_claim),
        accuracy=mean_interval(right, repeats),
        calls=mean_interval(calls, repeats),
        shares=(min(shares), max(shares)),
    )


def _by_gold(items: Sequence[ScreenedItem], share: float) -> str:
    golds: dict[str, list[ScreenedItem]] = defaultdict(list)
    for item in items:
        golds[item.gold].append(item)
    parts = []
    for gold, members in sorted(golds.items()):
        found = effect(members, share)
        parts.append(f"{gold} {found.right}/{found.items}, {found.calls:.1f} calls")
    return "; ".join(parts)


def report(items: Sequence[ScreenedItem], skipped: Sequence[str] = ()) -> list[str]:
    """Markdown: every candidate in sample, the criterion's rule, and its held-out estimate."""
    chosen = choose(items)
    full = effect(items, NEVER)
    lines = [
        f"# Escalation rule ({len(items)} items, criterion: the largest saving whose accuracy "
        f"is within one item per 50 of the method's, here at most "
        f"{len(items) * TOLERANCE:.2f} items)",
        "",
        "In sample:",
        "",
        "| rule | settled by the screen | right | calls per item | tokens per item | per gold |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for share in candidates(items):
        e = effect(items, share)
        mark = " (chosen)" if share == chosen.share else ""
        lines.append(
            f"| {e.name}{mark} | {e.settled}/{e.items} | {e.right}/{e.items} | {e.calls:.1f} "
            f"| {e.tokens:,.0f} | {_by_gold(items, share)} |"
        )
    saving = 1 - chosen.calls / full.calls if full.calls else 0.0
    lines += [
        "",
        f"Proposed: {chosen.name}: {chosen.right}/{chosen.items} right against the method's "
        f"{full.right}/{full.items}, {chosen.calls:.1f} calls per item against {full.calls:.1f} "
        f"({saving:.0%} fewer).",
        "",
    ]
    try:
        found = held_out(items)
    except CalibrationError as exc:
        lines.append(f"No held-out estimate: {exc}.")
    else:
        lines += [
            f"Held out (leave one claim out, {found.claims} claims; the rule rechosen each fold: "
            f"shares {found.shares[0]:g}-{found.shares[1]:g}, 2 = never; 95 % bootstrap "
            "intervals over claims):",
            "",
            "| accuracy | calls per claim |",
            "|---:|---:|",
            f"| {_span(found.accuracy, '.1%')} | {_span(found.calls, '.1f')} |",
        ]
    lines += [f"\nLeft out: {note}" for note in skipped]
    return lines
