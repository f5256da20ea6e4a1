"""Bootstrap intervals of a run's metrics and paired significance tests between two runs.

Every interval is scipy's percentile bootstrap (``scipy.stats.bootstrap``) at 95 %, with a
fixed seed and ``RESAMPLES`` resamples, so a report is the same every time it is written.
Items are resampled as clusters: an item drawn brings all its repeats, so the interval counts
both the item-to-item spread and (through each item's mean over its repeats) the
repeat-to-repeat spread, and it narrows as repeats are added when answers vary between them.
Rows are result rows (``results.jsonl``, or ``load_run``'s with ``repeat``); inside a run
items are told apart by ``id``, across runs by dataset and ``id`` (``item_key``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from factdebate.bench.judging.metrics import answered_rows
from factdebate.bench.judging.scoring import correct, llm_calls, tokens
from factdebate.datasets import ANSWER_TASK, LABEL_TASK
from factdebate.tools.scoring.answers import answer_scores

CONFIDENCE = 0.95
RESAMPLES = 4000
"""Bootstrap resamples per interval or test (p-values resolve to 1/4001)."""
SEED = 41
"""The resampling seed: the same rows always give the same interval."""
METHOD = "percentile bootstrap over items"
NO_INTERVAL = "none: fewer than 2 items"

Row = Mapping[str, Any]
Interval = dict[str, Any]


def _rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


def item_groups(rows: Sequence[Row]) -> list[list[Row]]:
    """The rows grouped by item id (one group per item, all its repeats), in first-seen order."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(str(row["id"]), []).append(row)
    return list(groups.values())


def repeats_of(rows: Sequence[Row]) -> int:
    """How many repeats the rows hold (1 for a run without repeats)."""
    return len({row.get("repeat", 1) for row in rows}) or 1


def _interval(
    estimate: float, low: float | None, high: float | None, n: int, repeats: int, method: str
) -> Interval:
    return {
        "estimate": estimate,
        "low": low,
        "high": high,
        "confidence": CONFIDENCE,
        "method": method,
        "n": n,
        "repeats": repeats,
        "resamples": RESAMPLES if low is not None and low != high else 0,
    }


def mean_interval(values: Sequence[float], repeats: int = 1) -> Interval:
    """Bootstrap interval of the mean of per-item values (each an item's mean over repeats).

    Fewer than 2 values give no interval (``low``/``high`` None); equal values give the value.
    """
    data = np.asarray(values, dtype=float)
    n = int(data.size)
    estimate = float(data.mean()) if n else 0.0
    if n < 2:
        return _interval(estimate, None, None, n, repeats, NO_INTERVAL)
    if np.all(data == data[0]):
        return _interval(estimate, estimate, estimate, n, repeats, "every item equal")
    low, high = _percentile_bootstrap(data, np.mean)
    return _interval(estimate, low, high, n, repeats, METHOD)


def _percentile_bootstrap(sample: np.ndarray, statistic: Callable[..., Any]) -> tuple[float, float]:
    """The 95 % percentile-bootstrap interval of ``statistic`` (vectorized) over ``sample``."""
    res = sps.bootstrap(
        (sample,),
        statistic,
        n_resamples=RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        vectorized=True,
        rng=_rng(),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def item_means(rows: Sequence[Row], value: Callable[[Row], float]) -> list[float]:
    """Per item, the mean of ``value`` over its rows (its repeats)."""
    return [sum(value(r) for r in group) / len(group) for group in item_groups(rows)]


def _right(task: str) -> Callable[[Row], float]:
    return lambda row: float(correct(dict(row), task))


def accuracy_interval(rows: Sequence[Row], task: str = LABEL_TASK) -> Interval:
    """Interval of the run's headline score: accuracy (labels) or strict exact match (answers)."""
    return mean_interval(item_means(rows, _right(task)), repeats_of(rows))


def per_repeat_scores(rows: Sequence[Row], task: str) -> dict[str, Any]:
    """``repeats``, ``items`` and ``per_repeat`` (each repeat's score) of repeated rows.

    Each repeat's score is over its answered rows (``answered_rows``).
    """
    by_repeat: dict[int, list[float]] = {}
    for row in rows:
        by_repeat.setdefault(int(row.get("repeat", 1)), [])
    for row in answered_rows(rows):
        by_repeat.setdefault(int(row.get("repeat", 1)), []).append(float(correct(dict(row), task)))
    return {
        "repeats": len(by_repeat),
        "items": len(item_groups(rows)),
        "per_repeat": [
            {"repeat": r, "n": len(v), "score": sum(v) / len(v) if v else 0.0}
            for r, v in sorted(by_repeat.items())
        ],
    }


def _confusions(groups: Sequence[Sequence[Row]], labels: Sequence[str]) -> np.ndarray:
    """Per item, its rows' counts as a flat confusion matrix (gold x predicted or none)."""
    width = len(labels) + 1
    index = {label: n for n, label in enumerate(labels)}
    counts = np.zeros((len(groups), len(labels) * width))
    for i, group in enumerate(groups):
        for row in group:
            gold = index.get(str(row["gold"]))
            if gold is not None:
                counts[i, gold * width + index.get(str(row.get("prediction")), len(labels))] += 1
    return counts


def _class_scores(summed: np.ndarray, classes: int) -> dict[str, np.ndarray]:
    """Per-class precision, recall and F1 of confusion counts (0.0 where undefined)."""
    matrix = summed.reshape(*summed.shape[:-1], classes, classes + 1)
    tp = np.diagonal(matrix[..., :classes], axis1=-2, axis2=-1)
    support = matrix.sum(axis=-1)
    predicted = matrix[..., :classes].sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / predicted, 0.0)
        recall = np.where(support > 0, tp / support, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1}


def _macro_f1(summed: np.ndarray, classes: int) -> np.ndarray:
    """Macro-F1 of confusion counts ``(..., classes * (classes + 1))`` (0.0 where undefined)."""
    result: np.ndarray = _class_scores(summed, classes)["f1"].mean(axis=-1)
    return result


def _macro_f1_gold(summed: np.ndarray, classes: int) -> np.ndarray:
    """Macro-F1 over the classes with gold items in the counts (each resample its own)."""
    f1 = _class_scores(summed, classes)["f1"]
    matrix = summed.reshape(*summed.shape[:-1], classes, classes + 1)
    present = matrix.sum(axis=-1) > 0
    count = present.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        result: np.ndarray = np.where(count > 0, (f1 * present).sum(axis=-1) / count, 0.0)
    return result


ConfusionScore = Callable[[np.ndarray, int], np.ndarray]
"""A score of summed confusion counts ``(..., classes * (classes + 1))``, one per sum."""


def confusion_interval(
    rows: Sequence[Row], labels: Sequence[str], score: ConfusionScore
) -> Interval:
    """Interval of a score of the pooled confusion counts, resampling items with their repeats."""
    groups = item_groups(rows)
    n, classes = len(groups), len(labels)
    counts = _confusions(groups, labels)
    estimate = float(score(counts.sum(axis=0), classes)) if classes else 0.0
    if n < 2 or not classes:
        return _interval(estimate, None, None, n, repeats_of(rows), NO_INTERVAL)
    if np.all(counts == counts[0]):
        return _interval(estimate, estimate, estimate, n, repeats_of(rows), "every item equal")

    def statistic(index: np.ndarray, axis: int = -1) -> np.ndarray:
        picks = np.asarray(index, dtype=np.intp)
        flat = picks.reshape(-1, picks.shape[-1])
        m = flat.shape[0]  # per resample, how often each item was drawn
        drawn = np.bincount((flat + n * np.arange(m)[:, None]).ravel(), minlength=m * n)
        summed = drawn.reshape(m, n).astype(float) @ counts
        return score(summed, classes).reshape(picks.shape[:-1])

    low, high = _percentile_bootstrap(np.arange(n), statistic)
    return _interval(estimate, low, high, n, repeats_of(rows), METHOD)


def macro_f1_interval(rows: Sequence[Row], labels: Sequence[str]) -> Interval:
    """Interval of macro-F1 (over ``labels``), resampling items with all their repeats."""
    return confusion_interval(rows, labels, _macro_f1)


def class_intervals(rows: Sequence[Row], labels: Sequence[str]) -> dict[str, Interval]:
    """Intervals of each label's precision, recall and F1, named ``"f1:SUPPORTS"`` and so on."""
    out: dict[str, Interval] = {}
    for position, label in enumerate(labels):
        for metric in ("precision", "recall", "f1"):

            def score(summed: np.ndarray, classes: int, m: str = metric, i: int = position) -> Any:
                return _class_scores(summed, classes)[m][..., i]

            out[f"{metric}:{label}"] = confusion_interval(rows, labels, score)
    return out


def metric_intervals(
    rows: Sequence[Row], task: str, labels: Sequence[str] = ()
) -> dict[str, Interval]:
    """The 95 % intervals a report shows, by metrics.json name.

    Labels: ``accuracy``, ``macro_f1``, ``macro_f1_gold`` (over the labels found in gold,
    in each resample those it drew)
    and each label's ``precision:LABEL``, ``recall:LABEL``, ``f1:LABEL``; answers:
    ``exact_match``, ``f1``, ``precision``, ``recall`` (answer scores); both:
    ``llm_calls_per_item``, ``tokens_per_item``. Scores are over the answered rows
    (``answered_rows``: a failed item is not a wrong one), cost per item over all rows.
    """
    repeats = repeats_of(rows)
    out: dict[str, Interval] = {}
    every, rows = rows, answered_rows(rows)
    if task == ANSWER_TASK:

        def scores(row: Row) -> dict[str, float]:
            return answer_scores(row.get("prediction") or [], row["gold"], row.get("wrong") or [])

        out["exact_match"] = accuracy_interval(rows, task)
        for name in ("f1", "precision", "recall"):

            def value(row: Row, key: str = name) -> float:
                return scores(row)[key]

            out[name] = mean_interval(item_means(rows, value), repeats)
    else:
        out["accuracy"] = accuracy_interval(rows, task)
        out["macro_f1"] = macro_f1_interval(rows, labels)
        out["macro_f1_gold"] = confusion_interval(rows, labels, _macro_f1_gold)
        out.update(class_intervals(rows, labels))
    out["llm_calls_per_item"] = mean_interval(
        item_means(every, lambda r: float(llm_calls(dict(r)))), repeats
    )
    out["tokens_per_item"] = mean_interval(
        item_means(every, lambda r: float(tokens(dict(r)))), repeats
    )
    return out


def mcnemar_exact(a_right: Sequence[bool], b_right: Sequence[bool]) -> float:
    """McNemar's exact test (two-sided) of two paired binary outcomes.

    The exact test is a two-sided binomial test (``scipy.stats.binomtest``, p = 0.5) on the
    discordant pairs: items only A got right against items only B got right. No discordant
    pair gives p = 1.
    """
    only_a = sum(a and not b for a, b in zip(a_right, b_right, strict=True))
    only_b = sum(b and not a for a, b in zip(a_right, b_right, strict=True))
    if only_a + only_b == 0:
        return 1.0
    return float(sps.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def paired_bootstrap(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Paired bootstrap of mean(a) - mean(b) over shared items: its 95 % interval and p-value.

    Items are resampled in pairs (``scipy.stats.bootstrap(paired=True)``). The p-value is
    two-sided: twice the smaller share of resampled differences at or below 0 and at or above
    0 (the share where the difference's sign flips or vanishes), counted as
    ``(count + 1) / (resamples + 1)``, at most 1 (Koehn's paired bootstrap, as DebateCV
    reports it). Fewer than 2 items give no test (None).
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = int(x.size)
    diff = float((x - y).mean()) if n else 0.0
    if n < 2:
        return {"difference": diff, "low": None, "high": None, "p_bootstrap": None}
    delta = x - y
    if np.all(delta == delta[0]):  # every resample gives the same difference
        dist = np.full(RESAMPLES, float(delta[0]))
        low = high = float(delta[0])
    else:
        res = sps.bootstrap(
            (x, y),
            lambda u, v, axis=-1: np.mean(u - v, axis=axis),
            paired=True,
            n_resamples=RESAMPLES,
            confidence_level=CONFIDENCE,
            method="percentile",
            vectorized=True,
            rng=_rng(),
        )
        dist = np.asarray(res.bootstrap_distribution)
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    flips = min(int((dist <= 0).sum()), int((dist >= 0).sum()))
    p = min(1.0, 2 * (flips + 1) / (dist.size + 1))
    return {"difference": diff, "low": low, "high": high, "p_bootstrap": p}


MIN_DISCORDANT = 6
"""Fewest discordant items (right in one run only) for a paired p-value to mean anything.

With d discordant items the smallest two-sided exact (McNemar) p-value there is, every one
of them going the same way, is ``2 * 0.5**d``: 0.5 at d = 2, 0.0625 at d = 5, first under
0.05 at d = 6. Below that no test of the pair can reject at 5 %, and the paired bootstrap,
which resamples the same few items, reports p-values far smaller than the data support, so
both are shown as not meaningful."""


def item_key(row: Row) -> tuple[str, str]:
    """What names an item across runs: its dataset and its id."""
    return str(row.get("dataset") or ""), str(row["id"])


def _item_content(row: Row) -> str:
    """What an item was, for a run's rows: its claim or question and its gold."""
    record = [row.get("claim"), row.get("question"), row.get("gold")]
    return json.dumps(record, sort_keys=True, default=str)


def _by_item(rows: Sequence[Row], task: str) -> dict[tuple[str, str], tuple[float, str]]:
    """Per answered item key: its mean correctness over its answered repeats, and the item.

    A failed row (``answered_rows``) is a fault, not a wrong answer: it is left out, and an
    item no repeat answered has no score to pair.
    """
    right = _right(task)
    return {
        item_key(g[0]): (sum(right(r) for r in g) / len(g), _item_content(g[0]))
        for g in item_groups(answered_rows(rows))
    }


def paired_test(rows_a: Sequence[Row], rows_b: Sequence[Row], task: str) -> dict[str, Any]:
    """Paired tests of two runs' headline score (accuracy or strict EM) on their shared items.

    An item is shared when both runs answered it (a failed item is not scored), both hold
    its key (dataset and id, ``item_key``) and it was
    the same item in both (same claim or question, same gold); an item whose key matches but
    whose text or gold differs is not paired (``differing`` counts them). Per item, a run's
    score is its mean correctness over its repeats; McNemar's test counts an item right when
    it was right in more than half its repeats (exactly: right, without repeats).

    Returns ``n`` (shared items), ``a``, ``b`` (each run's score on them; None without a
    shared item), ``difference`` (a - b, None likewise), ``low``/``high`` (its 95 %
    interval), ``p_bootstrap``, ``p_mcnemar``, ``only_a``/``only_b``/``discordant`` (the
    items only one run got right), ``meaningful`` (at least ``MIN_DISCORDANT`` discordant
    items: below it the p-values are shown as not meaningful), ``differing`` and
    ``items_a``/``items_b``.
    """
    by_a, by_b = _by_item(rows_a, task), _by_item(rows_b, task)
    both = [key for key in by_a if key in by_b]
    shared = [key for key in both if by_a[key][1] == by_b[key][1]]
    a = [by_a[key][0] for key in shared]
    b = [by_b[key][0] for key in shared]
    a_right, b_right = [v > 0.5 for v in a], [v > 0.5 for v in b]
    only_a = sum(x and not y for x, y in zip(a_right, b_right, strict=True))
    only_b = sum(y and not x for x, y in zip(a_right, b_right, strict=True))
    tested = paired_bootstrap(a, b)
    if not shared:
        tested["difference"] = None
    return {
        "n": len(shared),
        "items_a": len(item_groups(rows_a)),
        "items_b": len(item_groups(rows_b)),
        "differing": len(both) - len(shared),
        "a": sum(a) / len(a) if a else None,
        "b": sum(b) / len(b) if b else None,
        **tested,
        "p_mcnemar": mcnemar_exact(a_right, b_right) if len(shared) >= 2 else None,
        "only_a": only_a,
        "only_b": only_b,
        "discordant": only_a + only_b,
        "meaningful": only_a + only_b >= MIN_DISCORDANT,
        "confidence": CONFIDENCE,
        "resamples": RESAMPLES,
    }


def unpaired_reason(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """Why two runs cannot be compared item by item (None: they can).

    ``a`` and ``b`` are the runs' ``run.json`` records. Runs pair only over the same dataset:
    the same name and, where both record it, the same ``dataset_sha256`` (a fingerprint of
    every item of the dataset as loaded, whatever the sample).
    """
    name_a, name_b = a.get("dataset"), b.get("dataset")
    if not name_a or not name_b:
        return "a run.json names no dataset"
    if name_a != name_b:
        return f"different datasets ({name_a}, {name_b})"
    print_a, print_b = a.get("dataset_sha256"), b.get("dataset_sha256")
    if print_a and print_b and print_a != print_b:
        return f"different copies of {name_a} (their data fingerprints differ)"
    return None


PairedRun = tuple[str, Sequence[Row], Mapping[str, Any]]
"""A run to pair: its name, its rows and its ``run.json`` record."""


def paired_tests(runs: Sequence[PairedRun], task: str) -> tuple[list[dict[str, Any]], list[str]]:
    """``paired_test`` for every pair of named runs over the same data (in the order given).

    Returns the tests (named ``run_a`` / ``run_b``) and, for each pair over different data
    (``unpaired_reason``), a note saying why it has no paired row.
    """
    tests, notes = [], []
    for i, (name_a, rows_a, run_a) in enumerate(runs):
        for name_b, rows_b, run_b in runs[i + 1 :]:
            reason = unpaired_reason(run_a, run_b)
            if reason is not None:
                notes.append(f"{name_a} vs {name_b}: not paired, {reason}; shown side by side")
                continue
            tests.append({"run_a": name_a, "run_b": name_b, **paired_test(rows_a, rows_b, task)})
    return tests, notes


def p_text(value: float | None) -> str:
    """A p-value as a table shows it (``<0.001`` below a thousandth, ``n/a`` without one)."""
    if value is None:
        return "n/a"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def shown_p(test: Mapping[str, Any], key: str) -> str:
    """A paired test's p-value ``key``, or why it means nothing (too few discordant items)."""
    if test.get("n") and not test.get("meaningful", True):
        return f"not meaningful ({test.get('discordant', 0)} discordant < {MIN_DISCORDANT})"
    return p_text(test.get(key))


def shown(interval: Mapping[str, Any] | None, percent: bool = True) -> str:
    """An interval as ``[low, high]`` (percent, one decimal), or ``n/a`` without one."""
    if not interval or interval.get("low") is None or interval.get("high") is None:
        return "n/a"
    scale, digits = (100.0, 1) if percent else (1.0, 1)
    low, high = float(interval["low"]), float(interval["high"])
    if math.isnan(low) or math.isnan(high):
        return "n/a"
    return f"[{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
