"""What a comparison of runs says beside its scores: pairs, settings, what the sample supports.

Runs are tested item by item only over the same data (``stats.unpaired_reason``); a pair
with no shared item shows n/a, and a p-value from too few discordant items is shown as not
meaningful (``stats.MIN_DISCORDANT``). Every table gets a line on what its sample supports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factdebate.bench.judging.stats import (
    CONFIDENCE,
    MIN_DISCORDANT,
    RESAMPLES,
    paired_tests,
    shown,
    shown_p,
)
from factdebate.datasets import ANSWER_TASK, LABEL_TASK
from factdebate.runs.folder import RunNotFoundError
from factdebate.runs.reader import read_run_info
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.files import read_bounded

SMALL_SAMPLE = 30
"""Items under which a compare table warns that its intervals are wide."""


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def gold_macro(m: Mapping[str, Any]) -> tuple[float, list[str]]:
    """A label run's headline macro-F1, over the classes present in its gold labels, and them.

    A metrics.json written before ``macro_f1_gold`` was recorded gets it from ``per_class``.
    """
    if "macro_f1_gold" in m:
        return float(m["macro_f1_gold"]), list(m.get("macro_f1_gold_labels") or [])
    classes = [k for k, c in (m.get("per_class") or {}).items() if c.get("support")]
    f1 = [float(m["per_class"][k]["f1"]) for k in classes]
    return (sum(f1) / len(f1) if f1 else 0.0), classes


def support_lines(metrics: Sequence[Mapping[str, Any]], task: str) -> list[str]:
    """What the compare table's sample can support, and (labels) which classes macro-F1 means."""
    items = sorted({int(m.get("items", m["n"])) for m in metrics})
    n = items[0] if items else 0
    counted = f"{n}" if len(items) <= 1 else f"{items[0]} to {items[-1]}"
    half = 100 * 1.96 * (0.25 / n) ** 0.5 if n else 100.0
    lines = [
        f"What the sample supports: n = {counted} items per run. A 95% interval over {n} "
        f"items spans about +/-{half:.0f} points at 50%"
        + (f" (wide: under {SMALL_SAMPLE} items)" if n < SMALL_SAMPLE else "")
        + "; where every item scored alike (all right, or all wrong) the bootstrap interval "
        "collapses to a point, which shows the sample's limit, not certainty. Failed: items "
        "without a verdict because their model calls failed; failed calls/item: calls that "
        "brought no reply, counted apart from (and included in) calls/item.",
    ]
    if task == LABEL_TASK:
        classes = {", ".join(gold_macro(m)[1]) or "none" for m in metrics}
        which = classes.pop() if len(classes) == 1 else "each run's own"
        lines += [
            "",
            f"Macro-F1 (gold classes) averages the F1 of the classes present in the gold "
            f"labels ({which}); metrics.json keeps the average over all the dataset's "
            "classes as macro_f1.",
        ]
    return lines


def settings_lines(loaded: Sequence[tuple[Path, Mapping[str, Any]]]) -> list[str]:
    """The settings each run ran with, and how a matched run's ``k`` was chosen (match.json)."""
    lines = ["Settings each run ran with:", ""]
    for directory, m in loaded:
        run = m.get("run") or {}
        repeats = f", {run['repeats']} repeats" if run.get("repeats") else ""
        lines.append(
            f"- {directory.name}: limit {run.get('limit') or 'none'}, seed {run.get('seed')}"
            f"{repeats}; "
            f"settings `{json.dumps(run.get('context') or {}, sort_keys=True, default=str)}`"
            + _match_text(directory)
        )
    return lines


MAX_MATCH_BYTES = 1024**2  # largest match.json read


def _match_text(directory: Path) -> str:
    """How ``directory``'s ``k`` was matched to another run, from its match.json ("" if none)."""
    path = Path(directory) / "match.json"
    if not path.exists():
        return ""
    try:
        plan = json.loads(read_bounded(path, MAX_MATCH_BYTES, "match file"))
        target = plan["target"]
        return (
            f"; k = {int(plan['k'])}, matched on {plan['on']} to "
            f"{Path(str(target['run_dir'])).name} ({target['method']}: "
            f"{float(plan['target_per_item']):g} {plan['on']} per item over {target['items']} "
            f"items; {float(plan['per_sample']):g} per sample)"
        )
    except (FactDebateError, ValueError, TypeError, KeyError) as exc:
        return f"; its match.json cannot be read ({str(exc).splitlines()[0][:200]})"


def pair_tests(
    dirs: Sequence[Path], task: str, *, skip_bad_rows: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """Paired tests of every pair of runs over the same data, and notes on the rest.

    Pairs over different data (``stats.unpaired_reason``) get a note instead of a test; a run
    folder without result rows (only ``metrics.json``) is left out, with a note, and so is
    one with damaged rows unless ``skip_bad_rows``. Each test carries ``cells``: how a table
    shows it (``paired_cells``). Nothing is written.
    """
    from factdebate.bench.judging.rows import load_run

    runs, notes = [], []
    for directory in dirs:
        try:
            run = read_run_info(directory).model_dump(mode="json")
            runs.append(
                (Path(directory).name, load_run(directory, skip_bad_rows=skip_bad_rows), run)
            )
        except (RunNotFoundError, OSError, ValueError) as exc:
            notes.append(f"{Path(directory).name}: no paired test ({exc})")
    tests, unpaired = paired_tests(runs, task)
    for test in tests:
        test["cells"] = paired_cells(test)
    return tests, [*unpaired, *notes]


def paired_cells(t: Mapping[str, Any]) -> dict[str, str]:
    """A paired test as a table shows it; ``n/a`` throughout without a shared item."""
    if not t["n"]:
        return dict.fromkeys(
            ("a", "b", "difference", "interval", "p_bootstrap", "p_mcnemar"), "n/a"
        )
    return {
        "a": _pct(t["a"]),
        "b": _pct(t["b"]),
        "difference": f"{100 * t['difference']:+.1f}",
        "interval": shown(t),
        "p_bootstrap": shown_p(t, "p_bootstrap"),
        "p_mcnemar": shown_p(t, "p_mcnemar"),
    }


def paired_lines(tests: Sequence[dict[str, Any]], notes: Sequence[str], task: str) -> list[str]:
    """The paired-test table of compare_runs: one row per pair of runs over the same data."""
    if not tests and not notes:
        return []
    score = "strict EM" if task == ANSWER_TASK else "accuracy"
    if not tests:  # only runs over different data, or without rows: no table, the reasons
        return ["", f"## Paired tests ({score}, shared items)", "", "No pair to test."] + [
            f"\nNote: {note}" for note in notes
        ]
    lines = [
        "",
        f"## Paired tests ({score}, shared items)",
        "",
        f"A - B on the items both runs scored: the same dataset and item id, the same claim "
        f"and gold (an item's score: its mean over repeats). Discordant: items only one run "
        f"got right. Interval: {100 * CONFIDENCE:.0f}% paired bootstrap ({RESAMPLES} "
        "resamples); p (bootstrap): twice the share of resamples where the difference's sign "
        "flips; p (McNemar): exact test on the discordant items.",
        "",
        "| A | B | shared items | discordant | A % | B % | A - B | 95% interval "
        "| p (bootstrap) | p (McNemar) |",
        "|---|---|" + "---:|" * 8,
    ]
    for t in tests:
        c = t.get("cells") or paired_cells(t)
        lines.append(
            f"| {t['run_a']} | {t['run_b']} | {t['n']} | {t['discordant']} | {c['a']} | "
            f"{c['b']} | {c['difference']} | {c['interval']} | {c['p_bootstrap']} | "
            f"{c['p_mcnemar']} |"
        )
    lines += ["", paired_support(len(tests))]
    partial = [
        f"{t['run_a']} vs {t['run_b']}: tested on the {t['n']} items both scored "
        f"({t['run_a']} has {t['items_a']}, {t['run_b']} {t['items_b']}"
        + (f"; {t['differing']} share an id but not the claim or gold" if t["differing"] else "")
        + ")"
        for t in tests
        if t["n"] < max(t["items_a"], t["items_b"])
    ]
    return [*lines, *(f"\nNote: {note}" for note in [*partial, *notes])]


def paired_support(tests: int) -> str:
    """The line under a paired-test table: small samples, and how many tests it lists."""
    line = (
        f"What the pairs support: a p-value from fewer than {MIN_DISCORDANT} discordant items "
        "is shown as not meaningful (no test of so few can reach p < 0.05; see "
        "docs/worth-it.md)."
    )
    if tests > 1:
        line += (
            f" {tests} tests are listed, without correction: at p < 0.05 about "
            f"{0.05 * tests:.1f} would come out by chance alone with no real difference "
            f"(Bonferroni: p < {0.05 / tests:.4f} each)."
        )
    return line
