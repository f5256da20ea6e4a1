"""Tool-MAD's stability gate calibrated the paper's way: from the scores of right and wrong answers.

The paper chose its thresholds (faithfulness 0.7, answer relevance 0.8) by reading the score
distributions of its runs' right and wrong answers (its Fig. 3). This module does the same on
finished bench runs and states the rule it applies, so that the result can be checked:

* The unit is an **agreement**: a round in which both debaters concluded the same label. The
  gate matters only there (a disagreement never stops the debate), and an agreement that
  passes becomes the final verdict, so it is **right** when its label is the item's gold label
  and **wrong** otherwise. Its score is the lowest of its debaters' (the gate needs every
  debater to pass): faithfulness over the debaters with a tool, relevance over all.
* Left out of a metric's distribution: scores that could not be computed (they never pass),
  and relevance exactly 0, RAGAS's mark for an answer whose questions are all noncommittal
  (NOT ENOUGH INFO answers, see ``nei_relevance``): no threshold above 0 lets it pass, so it
  says nothing about where to put one.
* **Rule**: for each metric separately, the proposed threshold is the largest value on the
  grid 0.00, 0.01, ..., 1.00 at which at least ``keep`` of the right agreements score at or
  above it, but never above the metric's ``ceiling`` (by default the paper's value: with no
  or few wrong agreements in the data, a threshold above the paper's buys no measured
  precision and costs calls). The largest such value rejects as many wrong agreements as
  keeping that share allows; the share rejected is reported beside the ``reject`` target.

What a proposal would have changed on the same runs is computed from the recorded rounds: a
run stops at the first recorded round whose agreement passes, with that label as its verdict
and the calls of the rounds held (the run's calls without the judge's, spread evenly over its
rounds); a run that passed nowhere keeps its recorded outcome; a run that stopped by
consensus and would not pass now ran on past what was recorded, and is counted as recorded
and reported apart (``beyond_record``).

A threshold read off the same claims it is then scored on looks better than it is, so the
report adds a **held-out** estimate (``held_out``): every claim is scored under thresholds the
rule proposes from all *other* claims (leave one claim out; a claim's repeats leave together),
and the means of those outcomes, with bootstrap intervals over claims, are what the gate would
do on claims it has not seen. A fold whose other claims hold no right agreement uses the
ceilings and is counted apart.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factdebate.bench.judging.report import literal_text
from factdebate.bench.judging.scoring import RESULTS
from factdebate.bench.judging.stats import Interval, mean_interval
from factdebate.nodes.tool_mad.gate import PAPER, PROFILES, GateProfile
from factdebate.runs.reader import read_result_rows, skipped_note
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.files import write_atomic

GRID = 100  # thresholds are proposed on a grid of 1/GRID
BINS = 20  # bins of the distribution table (width 0.05)
METRICS = ("faithfulness", "relevance")
EPS = 1e-9


class CalibrationError(FactDebateError, ValueError):
    """The runs cannot be calibrated on (no Tool-MAD scores, no right agreement, ...)."""


@dataclass(frozen=True)
class Agreement:
    """One round in which both debaters concluded the same label, with its lowest scores."""

    item: str
    round: int
    label: str
    right: bool
    faithfulness: float | None  # None: not computed for a debater with a tool, or no tool
    relevance: float | None
    encoder: str
    tools: bool = True  # some debater had a tool (faithfulness applies)


@dataclass(frozen=True)
class RunRecord:
    """What an effect estimate needs of one finished item."""

    item: str
    gold: str
    prediction: str | None
    stop_reason: str
    rounds: int
    calls: int
    judge_calls: int
    agreements: tuple[Agreement, ...]


@dataclass(frozen=True)
class Proposal:
    """The threshold the rule gives for one metric, and how it splits the agreements."""

    metric: str
    threshold: float
    kept: float  # share of right agreements at or above it
    rejected: float | None  # share of wrong agreements below it (None: no wrong agreement)
    right: int
    wrong: int
    left_out: int  # agreements whose score is not in the distribution (see module doc)
    capped: bool  # the ceiling, not the data, set it


@dataclass(frozen=True)
class Effect:
    """Rounds, calls and accuracy of the runs under some thresholds, overall and per gold."""

    name: str
    faithfulness: float
    relevance: float
    items: int
    accuracy: float
    rounds: float
    calls: float
    by_gold: dict[str, tuple[int, float, float]]  # gold -> (items, mean rounds, mean calls)
    beyond_record: int = 0


@dataclass
class Calibration:
    """Everything ``calibrate-gate`` reports."""

    runs: list[RunRecord]
    encoders: list[str]
    keep: float
    reject: float
    proposals: dict[str, Proposal]
    effects: list[Effect] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # damaged rows left out, per file
    held_out: HeldOut | None = None  # None: fewer than two claims


def _lowest(values: Iterable[float | None]) -> float | None:
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    return min(v for v in values if v is not None)


def agreements_of(row: dict[str, Any]) -> list[Agreement]:
    """The agreements of one results.jsonl row (none for a row without a Tool-MAD result)."""
    result = row.get("result")
    if not isinstance(result, dict):
        return []
    by_round: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for turn in result.get("transcript") or []:
        if isinstance(turn, dict) and "answer_relevance" in turn:
            by_round[int(turn.get("round") or 0)].append(turn)
    found = []
    for round_no in sorted(by_round):
        turns = by_round[round_no]
        labels = {t.get("label") for t in turns}
        if len(turns) < 2 or len(labels) != 1 or None in labels:
            continue
        label = str(turns[0]["label"])
        tool_users = [t.get("faithfulness") for t in turns if t.get("tool") != "none"]
        encoders = sorted({str(t.get("relevance_encoder") or "unknown") for t in turns})
        found.append(
            Agreement(
                item=str(row.get("id", "")),
                round=round_no,
                label=label,
                right=label == row.get("gold"),
                faithfulness=_lowest(tool_users) if tool_users else None,
                relevance=_lowest(t.get("answer_relevance") for t in turns),
                encoder=", ".join(encoders),
                tools=bool(tool_users),
            )
        )
    return found


def run_record(row: dict[str, Any]) -> RunRecord | None:
    """One item's outcome and agreements; None for a failed item or another method's."""
    result = row.get("result")
    if not isinstance(result, dict) or not result.get("transcript"):
        return None
    if not any("answer_relevance" in t for t in result["transcript"] if isinstance(t, dict)):
        return None
    cost = result.get("cost") or {}
    return RunRecord(
        item=str(row.get("id", "")),
        gold=str(row.get("gold")),
        prediction=row.get("prediction", result.get("verdict")),
        stop_reason=str(result.get("stop_reason") or ""),
        rounds=int(result.get("rounds") or 0),
        calls=int((cost.get("total") or {}).get("llm_calls") or 0),
        judge_calls=int((cost.get("judge") or {}).get("llm_calls") or 0),
        agreements=tuple(agreements_of(row)),
    )


def result_rows(
    run_dirs: Sequence[Path], skip_bad_rows: bool = False, skipped: list[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Every result row of every run folder (``--repeats`` folders: every repeat), checked.

    Raises:
        CalibrationError: a folder holds no results.jsonl.
        RunReadError: a damaged row, without ``skip_bad_rows`` (with it the row is left out and
            named in ``skipped``).
    """
    for folder in run_dirs:
        files = [folder / RESULTS] if (folder / RESULTS).is_file() else []
        files = files or sorted(folder.glob(f"repeat-*/{RESULTS}"))
        if not files:
            raise CalibrationError(f"no {RESULTS} in {folder}: give finished bench run folders")
        for path in files:
            found = read_result_rows(path)
            rows = found.checked(skip_bad_rows)
            if skipped is not None and found.problems:
                skipped.append(skipped_note(str(path), found.problems))
            yield from rows


def read_runs(
    run_dirs: Sequence[Path], skip_bad_rows: bool = False, skipped: list[str] | None = None
) -> list[RunRecord]:
    """The Tool-MAD items of every run folder (``--repeats`` folders: every repeat).

    Nothing is written. A damaged row stops the calibration, or with ``skip_bad_rows`` is
    left out and named in ``skipped``.

    Raises:
        CalibrationError: a folder holds no results.jsonl, or no item has Tool-MAD scores.
        RunReadError: a damaged row, without ``skip_bad_rows``.
    """
    rows = result_rows(run_dirs, skip_bad_rows, skipped)
    records = [record for row in rows if (record := run_record(row)) is not None]
    if not records:
        raise CalibrationError(
            "no item with Tool-MAD scores (per-round faithfulness and answer relevance) in "
            f"{', '.join(str(f) for f in run_dirs)}; runs from before results kept the whole "
            "result cannot be calibrated on"
        )
    return records


def scores(agreements: Iterable[Agreement], metric: str) -> tuple[list[float], int]:
    """The metric's scores that enter its distribution, and how many agreements were left out."""
    kept, left_out = [], 0
    for a in agreements:
        value = a.faithfulness if metric == "faithfulness" else a.relevance
        if value is None or (metric == "relevance" and value == 0.0):
            left_out += 1
        else:
            kept.append(value)
    return kept, left_out


def propose_threshold(
    right: Sequence[float],
    wrong: Sequence[float],
    keep: float = 0.9,
    ceiling: float = 1.0,
    metric: str = "score",
    left_out: int = 0,
) -> Proposal:
    """The rule: the largest grid value keeping ``keep`` of ``right``, at most ``ceiling``.

    Raises:
        CalibrationError: no right score to keep. SettingsError: ``keep`` or ``ceiling``
            outside 0..1.
    """
    if not 0 < keep <= 1:
        raise SettingsError(f"keep must be within (0, 1], got {keep!r}")
    if not 0 <= ceiling <= 1:
        raise SettingsError(f"the {metric} ceiling must be within 0..1, got {ceiling!r}")
    if not right:
        raise CalibrationError(f"no right agreement has a {metric} score: nothing to keep")
    best = 0
    for step in range(GRID + 1):
        if sum(s >= step / GRID - EPS for s in right) >= keep * len(right) - EPS:
            best = step
    threshold = min(best / GRID, ceiling)
    return Proposal(
        metric=metric,
        threshold=threshold,
        kept=sum(s >= threshold - EPS for s in right) / len(right),
        rejected=sum(s < threshold - EPS for s in wrong) / len(wrong) if wrong else None,
        right=len(right),
        wrong=len(wrong),
        left_out=left_out,
        capped=best / GRID > ceiling,
    )


def propose(
    runs: Sequence[RunRecord],
    keep: float = 0.9,
    ceilings: tuple[float, float] = (PAPER.faithfulness, PAPER.relevance),
) -> dict[str, Proposal]:
    """Both metrics' proposals from the runs' agreements (the rule in the module docstring)."""
    agreements = [a for r in runs for a in r.agreements]
    proposals = {}
    for metric, ceiling in zip(METRICS, ceilings, strict=True):
        right, left_right = scores((a for a in agreements if a.right), metric)
        wrong, left_wrong = scores((a for a in agreements if not a.right), metric)
        proposals[metric] = propose_threshold(
            right, wrong, keep, ceiling, metric, left_out=left_right + left_wrong
        )
    return proposals


def _passes(a: Agreement, faithfulness: float, relevance: float) -> bool:
    if a.relevance is None or a.relevance < relevance - EPS:
        return False
    return not a.tools or (a.faithfulness is not None and a.faithfulness >= faithfulness - EPS)


def outcome(
    run: RunRecord, faithfulness: float, relevance: float
) -> tuple[int, int, str | None, bool]:
    """Rounds, calls and verdict of ``run`` under these thresholds, and whether it is a guess."""
    passing = next((a for a in run.agreements if _passes(a, faithfulness, relevance)), None)
    if passing is not None and (passing.round < run.rounds or run.stop_reason != "consensus"):
        per_round = (run.calls - run.judge_calls) / max(run.rounds, 1)
        return passing.round, round(per_round * passing.round), passing.label, False
    if passing is None and run.stop_reason == "consensus":
        return run.rounds, run.calls, run.prediction, True  # it would have run on: unknown
    return run.rounds, run.calls, run.prediction, False


def effect(runs: Sequence[RunRecord], name: str, faithfulness: float, relevance: float) -> Effect:
    """What these thresholds would have given on the runs (see the module docstring)."""
    per_gold: dict[str, list[tuple[int, int]]] = defaultdict(list)
    right = beyond = 0
    for run in runs:
        rounds, calls, verdict, guessed = outcome(run, faithfulness, relevance)
        per_gold[run.gold].append((rounds, calls))
        right += verdict == run.gold
        beyond += guessed
    every = [rc for rows in per_gold.values() for rc in rows]
    return Effect(
        name=name,
        faithfulness=faithfulness,
        relevance=relevance,
        items=len(runs),
        accuracy=right / len(runs),
        rounds=sum(r for r, _ in every) / len(every),
        calls=sum(c for _, c in every) / len(every),
        by_gold={
            gold: (
                len(rows),
                sum(r for r, _ in rows) / len(rows),
                sum(c for _, c in rows) / len(rows),
            )
            for gold, rows in sorted(per_gold.items())
        },
        beyond_record=beyond,
    )


def calibrate(
    run_dirs: Sequence[Path],
    keep: float = 0.9,
    reject: float = 0.5,
    ceilings: tuple[float, float] = (PAPER.faithfulness, PAPER.relevance),
    skip_bad_rows: bool = False,
) -> Calibration:
    """Read the runs, propose thresholds, and measure them against every named profile.

    Raises:
        CalibrationError, SettingsError, RunReadError: see ``read_runs`` and
            ``propose_threshold``.
    """
    if not 0 <= reject <= 1:
        raise SettingsError(f"reject must be within 0..1, got {reject!r}")
    skipped: list[str] = []
    runs = read_runs(run_dirs, skip_bad_rows, skipped)
    encoders = sorted({a.encoder for r in runs for a in r.agreements})
    if len(encoders) > 1:
        raise CalibrationError(
            f"the runs scored answer relevance with different encoders ({', '.join(encoders)}): "
            "their cosines sit on different scales; calibrate each encoder's runs apart"
        )
    proposals = propose(runs, keep, ceilings)
    found = Calibration(runs, encoders, keep, reject, proposals, skipped=skipped)
    f, r = proposals["faithfulness"].threshold, proposals["relevance"].threshold
    found.effects.append(effect(runs, "proposed", f, r))
    for profile in PROFILES.values():
        found.effects.append(effect(runs, profile.name, profile.faithfulness, profile.relevance))
    if len({r.item for r in runs}) >= 2:
        found.held_out = held_out(runs, keep, ceilings)
    return found


def distribution_table(runs: Sequence[RunRecord]) -> str:
    """Counts of right and wrong agreements per 0.05 bin of each metric (markdown)."""
    agreements = [a for r in runs for a in r.agreements]
    lines = [
        "| bin | faithfulness, right | faithfulness, wrong | relevance, right | relevance, wrong |",
        "|---|---:|---:|---:|---:|",
    ]
    columns = []
    for metric in METRICS:
        for side in (True, False):
            values, _ = scores((a for a in agreements if a.right is side), metric)
            counts = [0] * BINS
            for v in values:
                counts[min(int(v * BINS + EPS), BINS - 1)] += 1
            columns.append(counts)
    for b in range(BINS):
        cells = " | ".join(str(c[b]) for c in columns)
        lines.append(f"| {b / BINS:.2f}-{(b + 1) / BINS:.2f} | {cells} |")
    return "\n".join(lines)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def report(found: Calibration) -> str:
    """The calibration as markdown: data, rule, proposal, effect, distribution table."""
    agreements = [a for r in found.runs for a in r.agreements]
    rights = sum(a.right for a in agreements)
    lines = [
        "# Stability-gate calibration",
        "",
        f"{len(found.runs)} Tool-MAD items; {len(agreements)} agreements (rounds in which both "
        f"debaters concluded the same label): {rights} right, {len(agreements) - rights} wrong. "
        f"Relevance encoder(s): {', '.join(found.encoders) or 'unknown'}.",
        *(f"\nNot counted: {note}." for note in found.skipped),
        "",
        f"Rule: per metric, the largest threshold on a 0.01 grid keeping at least "
        f"{found.keep:.2f} of the right agreements (lowest debater score), at most the ceiling; "
        f"target: reject at least {found.reject:.2f} of the wrong ones. Left out: scores not "
        "computed, and relevance 0 (RAGAS's noncommittal mark).",
        "",
        "| metric | proposed | right kept | wrong rejected | right | wrong | left out | set by |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in found.proposals.values():
        met = p.rejected is None or p.rejected >= found.reject - EPS
        note = "ceiling" if p.capped else "data"
        if not met:
            note += "; reject target missed"
        lines.append(
            f"| {p.metric} | {p.threshold:.2f} | {p.kept:.2f} | {_share(p.rejected)} | "
            f"{p.right} | {p.wrong} | {p.left_out} | {note} |"
        )
    lines += ["", "What each set of thresholds would have given on these runs (in sample):", ""]
    lines += effect_table(found.effects)
    if found.held_out is not None:
        lines += ["", *held_out_table(found.held_out)]
    beyond = [e for e in found.effects if e.beyond_record]
    for e in beyond:
        lines.append(
            f"\n{e.name}: {e.beyond_record} item(s) stopped by consensus in the run would not "
            "pass these thresholds and would have run on past what was recorded; they are "
            "counted as recorded."
        )
    lines += ["", "Score distribution of the agreements:", "", distribution_table(found.runs)]
    return "\n".join(lines) + "\n"


def effect_table(effects: Sequence[Effect]) -> list[str]:
    """Markdown rows: thresholds, accuracy, rounds and calls, overall and per gold label."""
    golds = sorted({g for e in effects for g in e.by_gold})
    head = "| thresholds | faith. | rel. | accuracy | rounds | calls | " + " | ".join(
        f"{g}: rounds / calls" for g in golds
    )
    lines = [head + " |", "|---|---:|---:|---:|---:|---:|" + "---:|" * len(golds)]
    for e in effects:
        cells = " | ".join(
            f"{e.by_gold[g][1]:.2f} / {e.by_gold[g][2]:.1f}" if g in e.by_gold else "-"
            for g in golds
        )
        lines.append(
            f"| {e.name} | {e.faithfulness:.2f} | {e.relevance:.2f} | {e.accuracy:.1%} | "
            f"{e.rounds:.2f} | {e.calls:.1f} | {cells} |"
        )
    return lines


def profile_line(found: Calibration, name: str, date: str) -> str:
    """The proposal as a row for ``PROFILES`` (``nodes/tool_mad/gate.py``), to paste and edit."""
    f, r = (found.proposals[m].threshold for m in METRICS)
    proposed = GateProfile(
        name=name,
        faithfulness=f,
        relevance=r,
        encoder=", ".join(found.encoders) or "unknown",
        data=f"{len(found.runs)} items; rule: keep {found.keep:.2f}",
        date=date,
    )
    return repr(proposed)


@literal_text
def plot(found: Calibration) -> bytes:
    """The two distributions as the paper's Fig. 3 draws them, as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    agreements = [a for r in found.runs for a in r.agreements]
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    bins = [b / 40 for b in range(41)]
    for ax, metric, paper in zip(axes, METRICS, (PAPER.faithfulness, PAPER.relevance), strict=True):
        right, left_out = scores((a for a in agreements if a.right), metric)
        wrong, _ = scores((a for a in agreements if not a.right), metric)
        aside = f"; {left_out} left out" if left_out else ""
        ax.hist(right, bins=bins, color="#2b8a3e", alpha=0.7, label=f"right ({len(right)}{aside})")
        ax.hist(wrong, bins=bins, color="#c92a2a", alpha=0.7, label=f"wrong ({len(wrong)})")
        proposed = found.proposals[metric].threshold
        ax.axvline(proposed, color="black", linewidth=1.5, label=f"proposed {proposed:.2f}")
        ax.axvline(paper, color="gray", linestyle="--", linewidth=1.2, label=f"paper {paper:.2f}")
        ax.set_xlim(0, 1.02)
        name = "answer relevance" if metric == "relevance" else metric
        ax.set_xlabel(f"{name} (lowest of the two debaters)")
        ax.set_ylabel("agreements")
        ax.legend(fontsize=8, loc="upper left")
    encoder = ", ".join(found.encoders) or "unknown encoder"
    figure.suptitle(f"Agreements by final-verdict correctness ({encoder})", fontsize=10)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def write(found: Calibration, out_dir: Path) -> list[Path]:
    """Write ``calibration.md`` and ``calibration.png`` under ``out_dir`` (atomically)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "calibration.md", out_dir / "calibration.png"]
    write_atomic(paths[0], report(found))
    write_atomic(paths[1], plot(found))
    return paths


@dataclass(frozen=True)
class HeldOut:
    """Held-out outcomes of the rule: overall, per gold label, and the thresholds each fold got."""

    claims: int
    accuracy: Interval
    calls: Interval
    rounds: float
    by_gold: dict[str, tuple[int, float, float]]  # gold -> (claims, accuracy, calls per claim)
    relevance: tuple[float, float]  # lowest and highest relevance threshold over the folds
    faithfulness: tuple[float, float]
    unfitted: int  # folds with nothing to fit on (the ceilings were used)
    beyond_record: int  # outcomes past what the runs recorded, counted as recorded


def held_out(
    runs: Sequence[RunRecord],
    keep: float = 0.9,
    ceilings: tuple[float, float] = (PAPER.faithfulness, PAPER.relevance),
) -> HeldOut:
    """Each claim's outcome under thresholds fitted without it (see the module docstring).

    Raises:
        CalibrationError: fewer than two claims (nothing is left to fit on).
    """
    by_claim: dict[str, list[RunRecord]] = defaultdict(list)
    for run in runs:
        by_claim[run.item].append(run)
    if len(by_claim) < 2:
        raise CalibrationError("a held-out estimate needs at least two claims")
    right: dict[str, float] = {}
    calls: dict[str, float] = {}
    rounds: dict[str, float] = {}
    bounds: list[tuple[float, float]] = []
    unfitted = beyond = 0
    for claim, own in by_claim.items():
        others = [r for c, rows in by_claim.items() if c != claim for r in rows]
        try:
            found = propose(others, keep, ceilings)
            f, r = found["faithfulness"].threshold, found["relevance"].threshold
        except CalibrationError:
            f, r = ceilings
            unfitted += 1
        bounds.append((f, r))
        outcomes = [outcome(run, f, r) for run in own]
        beyond += sum(guessed for *_, guessed in outcomes)
        right[claim] = sum(v == run.gold for run, (_, _, v, _) in zip(own, outcomes, strict=True))
        right[claim] /= len(own)
        calls[claim] = sum(c for _, c, _, _ in outcomes) / len(own)
        rounds[claim] = sum(n for n, _, _, _ in outcomes) / len(own)
    golds: dict[str, list[str]] = defaultdict(list)
    for claim, own in by_claim.items():
        golds[own[0].gold].append(claim)
    repeats = max(len(own) for own in by_claim.values())
    return HeldOut(
        claims=len(by_claim),
        accuracy=mean_interval(list(right.values()), repeats),
        calls=mean_interval(list(calls.values()), repeats),
        rounds=sum(rounds.values()) / len(rounds),
        by_gold={
            gold: (
                len(members),
                sum(right[c] for c in members) / len(members),
                sum(calls[c] for c in members) / len(members),
            )
            for gold, members in sorted(golds.items())
        },
        relevance=(min(r for _, r in bounds), max(r for _, r in bounds)),
        faithfulness=(min(f for f, _ in bounds), max(f for f, _ in bounds)),
        unfitted=unfitted,
        beyond_record=beyond,
    )


def _span(interval: Interval, fmt: str) -> str:
    low, high = interval["low"], interval["high"]
    shown = format(interval["estimate"], fmt)
    if low is None:
        return f"{shown} (no interval)"
    return f"{shown} [{format(low, fmt)}, {format(high, fmt)}]"


def held_out_table(found: HeldOut) -> list[str]:
    """Markdown lines: the held-out estimate overall and per gold label, with its caveats."""
    golds = list(found.by_gold)
    lines = [
        f"Held out (leave one claim out, {found.claims} claims; thresholds refitted each fold: "
        f"faithfulness {found.faithfulness[0]:.2f}-{found.faithfulness[1]:.2f}, relevance "
        f"{found.relevance[0]:.2f}-{found.relevance[1]:.2f}; 95 % bootstrap intervals over "
        "claims):",
        "",
        "| accuracy | calls per claim | rounds | "
        + " | ".join(f"{g}: accuracy / calls" for g in golds)
        + " |",
        "|---:|---:|---:|" + "---:|" * len(golds),
        f"| {_span(found.accuracy, '.1%')} | {_span(found.calls, '.1f')} | {found.rounds:.2f} | "
        + " | ".join(
            f"{found.by_gold[g][1]:.1%} / {found.by_gold[g][2]:.1f} (n={found.by_gold[g][0]})"
            for g in golds
        )
        + " |",
    ]
    if found.unfitted:
        lines.append(
            f"\n{found.unfitted} fold(s) had no right agreement to fit on and used the ceilings."
        )
    if found.beyond_record:
        lines.append(
            f"\n{found.beyond_record} held-out outcome(s) would have run past what was recorded "
            "and are counted as recorded."
        )
    return lines
