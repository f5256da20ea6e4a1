"""Benchmark summaries: metrics.json, report.md, the confusion-matrix PNG and run comparison."""

from __future__ import annotations

import functools
import io
import json
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from factdebate.bench.judging.bill import bill_lines, coverage_lines
from factdebate.bench.judging.comparing import (
    gold_macro,
    pair_tests,
    paired_lines,
    settings_lines,
    support_lines,
)
from factdebate.bench.judging.metrics import (
    UNPARSED,
    answered_rows,
    coverage,
    failed_calls,
    failed_item,
    label_metrics,
    unreadable_flags,
)
from factdebate.bench.judging.prices import Price, load_prices, run_usd, usd_text
from factdebate.bench.judging.provenance import provenance_line
from factdebate.bench.judging.review_states import decided_rows, review_counts, review_lines
from factdebate.bench.judging.screens import screen_lines, screen_summary
from factdebate.bench.judging.stats import (
    CONFIDENCE,
    RESAMPLES,
    metric_intervals,
    per_repeat_scores,
    shown,
)
from factdebate.datasets import ANSWER_TASK, LABEL_TASK
from factdebate.runs.folder import RunFolderError
from factdebate.runs.reader import read_metrics
from factdebate.tools.core.files import write_atomic
from factdebate.tools.scoring.answers import answer_scores, mean_answer_scores
from factdebate.tools.websearch.cache import describe

PLOT_SIZE = (6.4, 3.6)  # inches: every plot of a report has this size (640 x 360 pixels)
PLOT_DPI = 100
P = ParamSpec("P")
R = TypeVar("R")


def literal_text(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` with every text of its figures drawn as the text it is (every plot uses it).

    Run folder, method and dataset names reach plots as given: a ``$`` in one must not start
    mathtext (a TeX command between two ``$`` would not draw at all, ``p$x^2$`` would draw as
    a formula), and TeX is off.
    """

    @functools.wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> R:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
            return draw(*args, **kwargs)

    return drawn


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[pos]


def cost_summary(
    rows: Sequence[dict[str, Any]], outside: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Total and per-item LLM usage, overall and per role, with the attempts retried apart.

    ``rejected`` counts provider attempts refused or failed and then retried (429s, 5xx, cut
    hangs): paid for, or at least sent, but not calls. ``outside`` are costs (role -> usage,
    like a row's) of calls no row holds (a killed item's, an earlier failed try's): they count
    in the totals, and per item over the rows.
    """
    per_role: dict[str, Counter[str]] = {}
    for cost in [*(row.get("cost") or {} for row in rows), *outside]:
        for role, usage in cost.items():
            counts = {
                k: int(usage.get(k, 0))
                for k in ("llm_calls", "input_tokens", "output_tokens", "rejected")
            }
            counts["samples"] = int(usage.get("samples", counts["llm_calls"]))
            per_role.setdefault(role, Counter()).update(counts)
    total = per_role.pop("total", Counter())
    n = max(1, len(rows))
    return {
        "llm_calls": total["llm_calls"],
        "rejected": total["rejected"],
        "input_tokens": total["input_tokens"],
        "output_tokens": total["output_tokens"],
        "per_item": {k: total[k] / n for k in ("llm_calls", "input_tokens", "output_tokens")},
        "per_role": {role: _usage(c) for role, c in sorted(per_role.items())},
    }


def _usage(counts: Counter[str]) -> dict[str, int]:
    """A role's usage; ``samples`` only where calls brought several answers (a provider's n)."""
    usage = dict(counts)
    if usage.get("samples") == usage.get("llm_calls"):
        usage.pop("samples", None)
    if not usage.get("rejected"):
        usage.pop("rejected", None)
    return usage


def _samples_lines(cost: dict[str, Any]) -> list[str]:
    """Which roles asked for several samples in one request, and what came back."""
    return [
        f"{role}: {u['llm_calls']} calls brought {u['samples']} answers (several samples per "
        "request, the provider's n).\n"
        for role, u in cost["per_role"].items()
        if "samples" in u
    ]


def latency_summary(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean, median, p90 and max seconds per item."""
    values = [float(r.get("latency_s") or 0.0) for r in rows]
    return {
        "mean_s": statistics.fmean(values) if values else 0.0,
        "p50_s": _percentile(values, 0.5),
        "p90_s": _percentile(values, 0.9),
        "max_s": max(values, default=0.0),
        "sum_s": sum(values),
    }


def run_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Failures (raised, or no model call worked), budget stops, error kinds, cost, latency."""
    kinds = Counter(e.get("kind", "?") for r in rows for e in (r.get("errors") or []))
    rounds = [int(r["rounds"]) for r in rows if isinstance(r.get("rounds"), int)]
    return {
        "failed": sum(failed_item(r) for r in rows),  # raised, or its model calls failed
        "failed_calls": sum(failed_calls(r) for r in rows),  # no reply: apart from the cost
        "budget_exhausted": sum(r.get("stop_reason") == "budget_exhausted" for r in rows),
        "items_with_errors": sum(bool(r.get("errors")) for r in rows),
        "error_kinds": dict(sorted(kinds.items())),
        "stop_reasons": dict(sorted(Counter(str(r.get("stop_reason")) for r in rows).items())),
        "mean_rounds": statistics.fmean(rounds) if rounds else 0.0,
        "cost": cost_summary(rows),
        "latency": latency_summary(rows),
        **({"screen": screened} if (screened := screen_summary(rows)) else {}),  # escalation
    }


def majority_baseline(golds: Sequence[str], labels: Sequence[str]) -> dict[str, Any] | None:
    """Accuracy of always answering the most frequent gold label; None without items.

    Ties go to the label listed first in ``labels``.
    """
    if not golds:
        return None
    counts = Counter(golds)
    order = {label: n for n, label in enumerate(labels)}
    label = min(counts, key=lambda g: (-counts[g], order.get(g, len(order)), g))
    return {"label": label, "accuracy": counts[label] / len(golds), "support": counts[label]}


def compute_metrics(rows: Sequence[dict[str, Any]], labels: Sequence[str]) -> dict[str, Any]:
    """Label metrics plus cost, latency, stop reasons and error kinds of a run's rows.

    The scores (accuracy, F1s, confusion, the majority baseline) are over the answered items;
    ``n`` counts every item, ``answered`` and ``coverage`` say how many of them were answered
    (a failed item is a fault, never a wrong answer); cost and latency are over every item.
    """
    answered = answered_rows(rows)
    golds = [r["gold"] for r in answered]
    preds = [r.get("prediction") for r in answered]
    scored = label_metrics(golds, preds, labels, unreadable_flags(answered))
    return {
        "task": LABEL_TASK,
        **scored,
        "n": len(rows),
        **coverage(rows),
        "labels": list(labels),
        "majority": majority_baseline(golds, labels),
        **run_summary(rows),
    }


def compute_answer_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean strict exact match and answer precision/recall/F1, plus the run summary.

    A row's ``prediction`` is its answer list (None when the run failed: scored as no answer),
    ``gold`` the correct answers and ``wrong`` the misinformation answers. The means are over
    the answered items (``coverage`` says how many); counts, cost and latency over every item.
    """
    per_item = [
        answer_scores(r.get("prediction") or [], r["gold"], r.get("wrong") or [])
        for r in answered_rows(rows)
    ]
    means = mean_answer_scores(per_item)
    return {
        "task": ANSWER_TASK,
        "n": len(rows),
        "exact_match": means["exact_match"],
        "precision": means["precision"],
        "recall": means["recall"],
        "f1": means["f1"],
        "unanswered": sum(r.get("prediction") is None for r in rows),
        **coverage(rows),
        **run_summary(rows),
    }


@literal_text
def plot_confusion(metrics: dict[str, Any], path: Path, title: str) -> None:
    """Save the confusion matrix (gold rows, predicted columns) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(metrics["labels"])
    columns = [*labels, UNPARSED]
    matrix = [[metrics["confusion"][g][p] for p in columns] for g in labels]
    fig, ax = plt.subplots(figsize=PLOT_SIZE)  # the size of the report's other plots
    ax.imshow(matrix, cmap="Blues", aspect="auto")  # fill the plot: cells are not squares
    peak = max((v for row in matrix for v in row), default=0)
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            ax.text(
                j,
                i,
                str(value),
                ha="center",
                va="center",
                color="white" if peak and value > peak / 2 else "black",
                fontsize=11,
            )
    ax.set_xticks(range(len(columns)), [c.replace(" ", "\n") for c in columns], fontsize=9)
    ax.set_yticks(range(len(labels)), [c.replace(" ", "\n") for c in labels], fontsize=9)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=PLOT_DPI)
    plt.close(fig)
    write_atomic(path, image.getvalue())


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _issue_lines(issues: Sequence[str], shown: int = 20) -> list[str]:
    """Report lines naming the malformed dataset records that were skipped."""
    if not issues:
        return []
    lines = [f"Skipped {len(issues)} malformed dataset record(s):", ""]
    lines += [f"- {issue}" for issue in issues[:shown]]
    if len(issues) > shown:
        lines.append(f"- ... and {len(issues) - shown} more (see metrics.json)")
    return [*lines, ""]


def _header(metrics: dict[str, Any], run: dict[str, Any]) -> list[str]:
    return [
        f"# {run['method']} on {run['dataset']}",
        "",
        f"Items: {metrics['n']} (limit {run.get('limit')}, seed {run.get('seed')}); "
        f"settings: `{json.dumps(run.get('context', {}), sort_keys=True)}`"
        + (f"; server {run['server_url']}" if run.get("server_url") else ""),
        "",
        f"Run by: {provenance_line(run.get('provenance'))}.",
        "",
    ]


def _label_lines(metrics: dict[str, Any]) -> list[str]:
    labels = metrics["labels"]
    columns = [*labels, UNPARSED]
    return [
        "| accuracy | macro-F1 | unparsed | out of labels | failed runs | items with errors "
        "| mean rounds |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {_pct(metrics['accuracy'])} | {_pct(metrics['macro_f1'])} | {metrics['unparsed']} | "
        f"{metrics.get('out_of_labels', 0)} | {metrics['failed']} | "
        f"{metrics['items_with_errors']} | {metrics['mean_rounds']:.2f} |",
        "",
        *coverage_lines(metrics),
        *_macro_lines(metrics),
        *_majority_lines(metrics),
        "## Per class",
        "",
        "| label | precision | recall | F1 | support |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {label} | {_pct(c['precision'])} | {_pct(c['recall'])} | {_pct(c['f1'])} | "
            f"{c['support']} |"
            for label, c in metrics["per_class"].items()
        ),
        "",
        "## Confusion matrix (rows gold, columns predicted)",
        "",
        "| gold \\ predicted | " + " | ".join(columns) + " |",
        "|---|" + "---:|" * len(columns),
        *(
            f"| {g} | " + " | ".join(str(metrics["confusion"][g][p]) for p in columns) + " |"
            for g in labels
        ),
        "",
        "![confusion matrix](confusion.png)",
        "",
    ]


def _macro_lines(metrics: dict[str, Any]) -> list[str]:
    """Which classes each macro-F1 averages over: all the dataset's labels, or those seen."""
    present = metrics.get("macro_f1_labels")
    if present is None:
        return []
    labels = metrics["labels"]
    return [
        f"Macro-F1 averages the F1 of all {len(labels)} labels of the dataset "
        f"({', '.join(labels)}); a label neither in gold nor predicted scores 0. Over the "
        f"{len(present)} labels in gold or predictions ({', '.join(present) or 'none'}) it is "
        f"{_pct(metrics['macro_f1_present'])}.",
        "",
    ]


def _majority_lines(metrics: dict[str, Any]) -> list[str]:
    """The majority-class baseline, to read the accuracy against."""
    majority = metrics.get("majority")
    if not majority:
        return []
    return [
        f"Majority-class baseline: always answering {majority['label']} scores "
        f"{_pct(majority['accuracy'])} accuracy ({majority['support']} of {metrics['n']}).",
        "",
    ]


def _answer_lines(metrics: dict[str, Any]) -> list[str]:
    return [
        "| strict EM | answer precision | answer recall | answer F1 | unanswered | failed runs "
        "| items with errors | mean rounds |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {_pct(metrics['exact_match'])} | {_pct(metrics['precision'])} | "
        f"{_pct(metrics['recall'])} | {_pct(metrics['f1'])} | {metrics['unanswered']} | "
        f"{metrics['failed']} | {metrics['items_with_errors']} | {metrics['mean_rounds']:.2f} |",
        "",
        *coverage_lines(metrics),
        "Strict EM: every gold answer found and no misinformation answer given. Precision: "
        "share of predicted answers that are correct; recall: share of gold answers found "
        "(means over items).",
        "",
    ]


INTERVAL_NAMES = {
    "accuracy": "accuracy",
    "macro_f1": "macro-F1",
    "macro_f1_gold": "macro-F1 (gold classes)",
    "exact_match": "strict EM",
    "f1": "answer F1",
    "precision": "answer precision",
    "recall": "answer recall",
    "llm_calls_per_item": "LLM calls per item",
    "tokens_per_item": "tokens per item",
}
"""How report.md and report.html name each interval of ``metrics["intervals"]``; a label's
``precision:LABEL`` (and recall, F1) is shown as ``LABEL precision``."""
COUNT_INTERVALS = frozenset({"llm_calls_per_item", "tokens_per_item"})
"""Intervals of counts per item; every other interval is of a score shown in percent."""


def interval_name(key: str) -> str:
    """How a report names the interval ``key`` of ``metrics["intervals"]``."""
    metric, _, label = key.partition(":")
    if label:
        return f"{label} {'F1' if metric == 'f1' else metric}"
    return INTERVAL_NAMES.get(key, key)


def interval_rows(metrics: dict[str, Any]) -> list[dict[str, str]]:
    """The intervals of a run as table rows: name, value and interval, as the report shows them."""
    out = []
    for key, interval in (metrics.get("intervals") or {}).items():
        percent = key not in COUNT_INTERVALS
        value = float(interval.get("estimate") or 0.0)
        out.append(
            {
                "name": interval_name(key),
                "value": _pct(value) if percent else f"{value:.1f}",
                "interval": shown(interval, percent),
                "method": str(interval.get("method", "")),
            }
        )
    return out


def _interval_lines(metrics: dict[str, Any]) -> list[str]:
    """The 95 % bootstrap interval of every score, cost per item included."""
    rows = interval_rows(metrics)
    if not rows:
        return []
    items = metrics.get("items", metrics["n"])
    repeats = int(metrics.get("repeats") or 1)
    over = f"{items} items" + (f" with {repeats} repeats each" if repeats > 1 else "")
    return [
        f"## {100 * CONFIDENCE:.0f}% bootstrap intervals",
        "",
        f"Percentile bootstrap over {over} (an item drawn brings all its repeats), "
        f"{RESAMPLES} resamples, fixed seed; n/a: fewer than 2 items.",
        "",
        "| metric | value | 95% interval |",
        "|---|---:|---:|",
        *(f"| {r['name']} | {r['value']} | {r['interval']} |" for r in rows),
        "",
    ]


def _repeat_lines(metrics: dict[str, Any]) -> list[str]:
    """With repeats: how many, and each repeat's headline score."""
    per_repeat = metrics.get("per_repeat") or []
    if not per_repeat:
        return []
    name = "strict EM" if metrics.get("task") == ANSWER_TASK else "accuracy"
    scores = ", ".join(f"{p['repeat']}: {_pct(p['score'])}" for p in per_repeat)
    return [
        f"Repeats: {metrics['repeats']} runs of the same {metrics['items']} items "
        f"(counts below are over all {metrics['n']} rows); {name} per repeat: {scores}.",
        "",
    ]


def _usd_lines(cost: Mapping[str, Any]) -> list[str]:
    """The run's USD in all, per item and per right answer (written by ``write_summary``)."""
    if "usd" not in cost:
        return []
    if cost["usd"] is None:
        return [
            "USD: unpriced (no price for "
            + ", ".join(cost.get("unpriced") or ["a model"])
            + "; set one with --price MODEL=IN,OUT or in the prices file, see docs/benchmarks.md).",
            "",
        ]
    per_right = cost.get("usd_per_right_answer")
    return [
        f"USD {usd_text(cost['usd'])} ({usd_text(cost.get('usd_per_item'), 5)} per item, "
        + (
            f"{usd_text(per_right, 5)} per right answer"
            if per_right is not None
            else "no right answer"
        )
        + "), at "
        + "; ".join(
            f"{m} ${p['input']:g} / ${p['output']:g} per million input / output tokens"
            for m, p in (cost.get("prices") or {}).items()
        )
        + ".",
        "",
    ]


def _search_lines(cost: Mapping[str, Any]) -> list[str]:
    """Web searches of this invocation: paid calls made, and those the search cache saved."""
    found = cost.get("web_search") or {}
    if not found.get("live_calls") and not found.get("hits"):
        return []
    return [f"{describe(found).capitalize()}.", ""]


def _role_usd(cost: Mapping[str, Any], role: str) -> str:
    if "usd_per_role" not in cost:
        return ""
    return usd_text((cost.get("usd_per_role") or {}).get(role))


def _usd_cells(metrics: Mapping[str, Any], prices: Mapping[str, Price]) -> str:
    """USD per item and per right answer of a run under today's prices (or "unpriced")."""
    usd = run_usd(metrics, prices)
    per_right = usd["usd_per_right_answer"]
    if usd["usd"] is not None and per_right is None:
        return f"{usd_text(usd['usd_per_item'], 5)} | no right answer"
    return f"{usd_text(usd['usd_per_item'], 5)} | {usd_text(per_right, 5)}"


def render_report(metrics: dict[str, Any], run: dict[str, Any]) -> str:
    """Markdown report of one run (label or answer metrics by ``metrics["task"]``)."""
    cost, lat = metrics["cost"], metrics["latency"]
    scores = _answer_lines(metrics) if metrics.get("task") == ANSWER_TASK else _label_lines(metrics)
    lines = [
        *_header(metrics, run),
        *review_lines(metrics),
        *_repeat_lines(metrics),
        *scores,
        *_interval_lines(metrics),
        "## Cost",
        "",
        f"LLM calls {cost['llm_calls']} ({cost['per_item']['llm_calls']:.1f} per item), "
        f"input tokens {cost['input_tokens']} ({cost['per_item']['input_tokens']:.0f} per item), "
        f"output tokens {cost['output_tokens']} "
        f"({cost['per_item']['output_tokens']:.0f} per item)"
        + (
            f"; {metrics['failed_calls']} of the calls brought no reply (counted in the calls)."
            if metrics.get("failed_calls")
            else "."
        ),
        "",
        *bill_lines(cost, run),
        *_usd_lines(cost),
        *_search_lines(cost),
        "| role | LLM calls | input tokens | output tokens | USD |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {role} | {u.get('llm_calls', 0)} | {u.get('input_tokens', 0)} | "
            f"{u.get('output_tokens', 0)} | {_role_usd(cost, role)} |"
            for role, u in cost["per_role"].items()
        ),
        "",
        *_samples_lines(cost),
        "## Latency per item (seconds)",
        "",
        "| mean | median | p90 | max |",
        "|---:|---:|---:|---:|",
        f"| {lat['mean_s']:.2f} | {lat['p50_s']:.2f} | {lat['p90_s']:.2f} | {lat['max_s']:.2f} |",
        "",
        "## Stop reasons and recorded errors",
        "",
        "Stop reasons: "
        + (", ".join(f"{k} {v}" for k, v in metrics["stop_reasons"].items()) or "none"),
        "",
        f"Items stopped by a budget (budget_exhausted): {metrics.get('budget_exhausted', 0)}",
        "",
        *screen_lines(metrics.get("screen")),
        *_issue_lines(run.get("load_issues") or []),
        *(f"Note: {note}\n" for note in run.get("notes") or []),  # e.g. HoVer run claim-only
        "Error kinds: "
        + (", ".join(f"{k} {v}" for k, v in metrics["error_kinds"].items()) or "none"),
        "",
    ]
    return "\n".join(lines)


def write_summary(
    out_dir: Path,
    rows: Sequence[dict[str, Any]],
    labels: Sequence[str],
    run: dict[str, Any],
    task: str = LABEL_TASK,
) -> dict[str, Any]:
    """Write metrics.json, report.md and (labels only) confusion.png; return the metrics."""
    every, rows = rows, decided_rows(rows)  # a verdict awaiting review is not scored yet
    metrics = compute_answer_metrics(rows) if task == ANSWER_TASK else compute_metrics(rows, labels)
    metrics.update(review_counts(every))
    outside = run.get("outside_rows")
    if outside:  # calls no scored row holds (a killed item's, a replaced try's): in the bill
        metrics["cost"] = cost_summary(rows, [outside["cost"]])
    metrics["intervals"] = metric_intervals(rows, task, labels)
    if any("repeat" in r for r in rows):  # bench --repeats: n counts rows of every repeat
        metrics.update(per_repeat_scores(rows, task))
    metrics["run"] = run
    metrics["cost"].update(run_usd(metrics, load_prices()))  # models per role, USD
    if run.get("web_search"):  # this invocation's paid searches and the cache's answers
        metrics["cost"]["web_search"] = run["web_search"]
    write_atomic(out_dir / "metrics.json", json.dumps(metrics, indent=2, default=str) + "\n")
    if task != ANSWER_TASK:
        plot_confusion(metrics, out_dir / "confusion.png", f"{run['method']} on {run['dataset']}")
    write_atomic(out_dir / "report.md", render_report(metrics, run))
    return metrics


_COMPARE_HEADERS = {
    LABEL_TASK: ("accuracy", "macro-F1 (gold classes)", "unparsed"),
    ANSWER_TASK: ("strict EM", "answer F1", "unanswered"),
}


def _scores(m: dict[str, Any]) -> str:
    """A run's two scores, each with its 95% interval where metrics.json holds one."""
    intervals = m.get("intervals") or {}

    def score(name: str, value: float) -> str:
        interval = intervals.get(name)
        return _pct(value) + (f" {shown(interval)}" if interval else "")

    if m.get("task") == ANSWER_TASK:
        return (
            f"{score('exact_match', m['exact_match'])} | {score('f1', m['f1'])} | {m['unanswered']}"
        )
    macro = score("macro_f1_gold", gold_macro(m)[0])
    return f"{score('accuracy', m['accuracy'])} | {macro} | {m['unparsed']}"


def _failed_calls(m: Mapping[str, Any]) -> str:
    if "failed_calls" not in m:
        return "n/a"
    return f"{int(m['failed_calls']) / max(1, int(m['n'])):.1f}"


def compare_runs(
    dirs: Sequence[Path],
    prices: Mapping[str, Price] | None = None,
    *,
    skip_bad_rows: bool = False,
) -> str:
    """Side-by-side Markdown table of several runs' metrics.json (all label or all answer runs).

    USD comes from ``prices`` (default: ``load_prices()``), so a price set after a run counts.
    Under each table a line says what the sample can support; the runs' settings (and a
    matched ``k``, from match.json) and paired tests of the runs over the same data follow.

    Nothing in the run folders is written. A run with damaged rows is refused, or with
    ``skip_bad_rows`` its other rows are compared and a note says how many were skipped.

    Raises:
        FileNotFoundError: a directory without metrics.json.
        ValueError: label runs mixed with answer runs (their scores are not comparable), a
            damaged metrics.json or run.json, damaged rows without ``skip_bad_rows``.
    """
    from factdebate.bench.judging.rows import check_rows

    loaded = [(Path(directory), read_metrics(directory).as_dict()) for directory in dirs]
    skipped = check_rows(dirs, skip_bad_rows)
    tasks = {m.get("task", LABEL_TASK) for _, m in loaded}
    if len(tasks) > 1:
        raise RunFolderError("cannot compare label runs (claims) with answer runs (questions)")
    task = tasks.pop() if tasks else LABEL_TASK
    header = (
        f"| run | method | dataset | n | {' | '.join(_COMPARE_HEADERS[task])} | failed | "
        "failed calls/item | calls/item | tokens/item | USD/item | USD/right answer | "
        "latency mean s |"
    )
    lines = [header, "|---|---|---|" + "---:|" * 11]
    prices = load_prices() if prices is None else prices
    datasets = set()
    for directory, m in loaded:
        run, cost = m.get("run", {}), m["cost"]["per_item"]
        datasets.add((run.get("dataset"), run.get("limit"), run.get("seed")))
        lines.append(
            f"| {directory.name} | {run.get('method')} | {run.get('dataset')} | {m['n']} | "
            f"{_scores(m)} | {m.get('failed', 0)} | {_failed_calls(m)} | "
            f"{cost['llm_calls']:.1f} | {cost['input_tokens'] + cost['output_tokens']:.0f} | "
            f"{_usd_cells(m, prices)} | {m['latency']['mean_s']:.2f} |"
        )
    lines += ["", *support_lines([m for _, m in loaded], task)]
    lines += ["", "Run by:", ""]
    lines += [
        f"- {d.name}: {provenance_line((m.get('run') or {}).get('provenance'))}" for d, m in loaded
    ]
    lines += ["", *settings_lines(loaded)]
    if len(datasets) > 1:
        lines += [
            "",
            "Note: these runs used different datasets, limits or seeds; the items "
            "differ, so the numbers are not directly comparable.",
        ]
    tested = pair_tests([d for d, _ in loaded], task, skip_bad_rows=skip_bad_rows)
    lines += paired_lines(*tested, task)
    lines += [f"\nNote: {note}" for note in skipped]
    return "\n".join(lines) + "\n"
