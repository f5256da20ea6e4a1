"""The bench run as one self-contained HTML page with plots (and several runs side by side)."""

from __future__ import annotations

import base64
import hashlib
import io
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factdebate.bench.judging.comparing import pair_tests, paired_support, support_lines
from factdebate.bench.judging.pareto import pareto_view
from factdebate.bench.judging.prices import Price, load_prices
from factdebate.bench.judging.provenance import provenance_rows
from factdebate.bench.judging.report import PLOT_DPI, PLOT_SIZE, interval_rows, literal_text
from factdebate.bench.judging.review_states import awaiting_review
from factdebate.datasets import ANSWER_TASK
from factdebate.pages.debate import environment, write_debate_page, write_page
from factdebate.runs.folder import RunFolderError
from factdebate.runs.reader import RunReadError, read_metrics
from factdebate.tools.core.files import read_bounded_bytes
from factdebate.tools.core.secrets import redact_deep
from factdebate.tools.scoring.answers import answer_scores

PAGE = "report.html"
CONFUSION = "confusion.png"
PAGES = "pages"  # folder of the per-item debate pages inside a run directory
AUTO_PAGES = 50  # runs of at most this many items write per-item pages unless told otherwise
MAX_PNG_BYTES = 16 * 1024**2  # largest plot file of a run put into a page


def pages_wanted(pages: bool | None, items: int) -> bool:
    """Whether a run writes per-item pages: as asked, else only for runs of <= AUTO_PAGES."""
    return items <= AUTO_PAGES if pages is None else pages


def item_page(item_id: object) -> str:
    """The page of an item, relative to the run directory (a file-safe name, unique per id)."""
    text = str(item_id)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "item"
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return f"{PAGES}/{safe}-{digest}.html"


def write_item_page(
    out_dir: Path,
    row: dict[str, Any],
    result: Mapping[str, Any],
    method: str,
    settings: Mapping[str, Any],
) -> None:
    """Write one item's debate page; a failure to write is recorded in the row's errors."""
    text = str(row.get("claim") or row.get("question") or row.get("id"))
    try:
        write_debate_page(
            Path(out_dir) / item_page(row["id"]),
            redact_deep(dict(result)),
            " ".join(text.split()),
            method,
            settings,
            row.get("latency_s"),
        )
    except ValueError as exc:  # a full disk or unwritable folder must not stop the run
        row.setdefault("errors", []).append(
            {"kind": "page_error", "stage": "page", "message": str(exc)[:500]}
        )


def _figure(width: float = PLOT_SIZE[0], height: float = PLOT_SIZE[1]) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def _data_uri(fig: Any) -> str:
    """PNG of ``fig`` as a data: URI (the page loads nothing from elsewhere); closes it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=PLOT_DPI)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _png_uri(path: Path) -> str | None:
    """An existing PNG (the run's confusion matrix) as a data: URI, if it is there.

    Raises:
        RunReadError: it is there but not a regular file, or over ``MAX_PNG_BYTES``.
    """
    if not path.exists():
        return None
    data = read_bounded_bytes(path, MAX_PNG_BYTES, "plot file", RunReadError)
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _integer_axis(axis: Any) -> None:
    """Ticks on whole numbers only (items, rounds: never 0.5)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


@literal_text
def _bars(
    groups: Sequence[str],
    series: Mapping[str, Sequence[float]],
    title: str,
    ylabel: str,
    *,
    percent: bool = False,
    baseline: tuple[str, float] | None = None,
) -> str:
    """Grouped bar chart: one group per name, one bar per series (shares shown as percent)."""
    fig, ax = _figure()
    width = 0.8 / max(1, len(series))
    scale = 100.0 if percent else 1.0
    for n, (name, values) in enumerate(series.items()):
        bars = ax.bar(
            [i + n * width for i in range(len(groups))],
            [scale * v for v in values],
            width,
            label=name,
        )
        ax.bar_label(bars, fmt="%.1f" if percent else "%.2g", fontsize=8)
    ax.set_xticks(
        [i + width * (len(series) - 1) / 2 for i in range(len(groups))],
        [g.replace(" ", "\n") for g in groups],
        fontsize=9,
    )
    if baseline is not None:
        name, value = baseline
        ax.axhline(scale * value, color="#8c8c8c", linestyle="--", linewidth=1, label=name)
    if percent:
        ax.set_ylim(0, 125)  # room above 100 % for the legend
        ax.set_yticks(range(0, 101, 20))
    _pad(ax, len(groups), width * (len(series) - 1) / 2)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    if len(series) > 1 or baseline is not None:
        ax.legend(fontsize=8, loc="upper center", ncol=len(series) + (baseline is not None))
    return _data_uri(fig)


def _pad(ax: Any, groups: int, center: float = 0.0) -> None:
    """Keep bars slim when there are few groups (one bar must not fill the whole plot).

    ``center`` is the offset of a group's middle from its position (grouped bars).
    """
    pad = max(0.6, (4 - groups) / 2)
    ax.set_xlim(center - pad, center + groups - 1 + pad)


@literal_text
def _counts(counts: dict[str, int], title: str, xlabel: str) -> str:
    """Items per category (rounds held, stop reasons): whole numbers on the count axis."""
    fig, ax = _figure()
    names = list(counts)
    bars = ax.bar(range(len(names)), [counts[k] for k in names], color="#4c72b0")
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(names)), [k.replace("_", "\n") for k in names], fontsize=9)
    _pad(ax, len(names))
    _integer_axis(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("items")
    ax.set_title(title, fontsize=11)
    return _data_uri(fig)


@literal_text
def _per_item(values: Sequence[float], title: str, ylabel: str, color: str) -> str:
    """One value per item, in dataset order (item numbers are whole numbers)."""
    fig, ax = _figure()
    ax.bar(range(1, len(values) + 1), values, color=color)
    _integer_axis(ax.xaxis)
    ax.set_xlabel("item (dataset order)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    return _data_uri(fig)


def run_plots(
    out_dir: Path, metrics: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> list[dict[str, str]]:
    """The plots of one run: confusion matrix, per-class scores, rounds, stop reasons, cost.

    Every plot has the same size; scores are in percent, like the tables; counts of items and
    rounds are whole numbers.
    """
    plots: list[dict[str, str]] = []
    confusion = _png_uri(out_dir / CONFUSION)
    if confusion:
        plots.append({"title": "Confusion matrix (rows gold, columns predicted)", "src": confusion})
    if metrics.get("task") == ANSWER_TASK:
        names = ["exact_match", "precision", "recall", "f1"]
        plots.append(
            {
                "title": "Answer scores (%)",
                "src": _bars(
                    names,
                    {"mean": [metrics[k] for k in names]},
                    "answer scores",
                    "%",
                    percent=True,
                ),
            }
        )
    elif metrics.get("per_class"):
        classes = list(metrics["per_class"])
        series = {
            k: [float(metrics["per_class"][c][k]) for c in classes]
            for k in ("precision", "recall", "f1")
        }
        plots.append(
            {
                "title": "Per-class precision, recall and F1 (%)",
                "src": _bars(classes, series, "per class", "%", percent=True),
            }
        )
    rounds: dict[str, int] = {}
    for r in rows:
        key = str(r.get("rounds"))
        rounds[key] = rounds.get(key, 0) + 1
    ordered = dict(sorted(rounds.items(), key=lambda kv: (not kv[0].isdigit(), kv[0].zfill(4))))
    plots.append({"title": "Rounds held", "src": _counts(ordered, "rounds per item", "rounds")})
    plots.append(
        {
            "title": "Stop reasons",
            "src": _counts(dict(metrics.get("stop_reasons") or {}), "stop reasons", "reason"),
        }
    )
    if rows:
        latency = [float(r.get("latency_s") or 0.0) for r in rows]
        tokens = [_tokens(r) for r in rows]
        plots.append(
            {
                "title": "Latency per item (seconds)",
                "src": _per_item(latency, "latency per item", "seconds", "#55a868"),
            }
        )
        plots.append(
            {
                "title": "Cost per item (tokens in + out)",
                "src": _per_item(tokens, "cost per item", "tokens (in + out)", "#c44e52"),
            }
        )
    return plots


def _tokens(row: Mapping[str, Any]) -> int:
    total = (row.get("cost") or {}).get("total", {})
    return int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))


def _shown(value: Any) -> str:
    """A gold or predicted value as text (answer lists joined)."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return "; ".join(str(v) for v in value) or "(none)"
    return str(value)


def _right(row: Mapping[str, Any], is_answers: bool) -> bool:
    """Whether an item was answered right: its gold label, or (answers) a strict exact match."""
    if not is_answers:
        return bool(row.get("prediction") == row.get("gold"))
    scores = answer_scores(row.get("prediction") or [], row["gold"], row.get("wrong") or [])
    return scores["exact_match"] == 1.0


def item_rows(out_dir: Path, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items table: text, gold, prediction, error kinds and the item's page (if written)."""
    shown = []
    for row in rows:
        kinds = Counter(str(e.get("kind") or "?") for e in row.get("errors") or [])
        is_answers = isinstance(row.get("gold"), list | tuple)
        page = item_page(row.get("id"))
        waiting = awaiting_review(row)  # a proposal: shown as such, neither right nor wrong
        proposed = (row.get("review") or {}).get("proposed") if waiting else None
        shown.append(
            {
                **row,
                "text": str(row.get("claim") or row.get("question") or ""),
                "gold_text": _shown(row.get("gold")),
                "prediction_text": (
                    f"{_shown(proposed) or 'no verdict'} (proposed, awaiting review)"
                    if waiting
                    else _shown(row.get("prediction"))
                ),
                "is_label": not is_answers,
                "waiting": waiting,
                "proposed": proposed,
                "right": None if waiting else _right(row, is_answers),
                "error_kinds": dict(sorted(kinds.items())),
                "page": page if (Path(out_dir) / page).is_file() else None,
            }
        )
    return shown


def render_bench_page(
    out_dir: Path, metrics: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> str:
    """HTML of one bench run: headline scores, plots, cost per role, the items' outcomes."""
    return (
        environment()
        .get_template("bench.html.j2")
        .render(
            runs=[
                {
                    "name": Path(out_dir).name,
                    "metrics": metrics,
                    "intervals": interval_rows(metrics),
                    "provenance": provenance_rows(metrics.get("run", {}).get("provenance")),
                }
            ],
            plots=run_plots(Path(out_dir), metrics, rows),
            rows=item_rows(Path(out_dir), rows),
            compare=False,
        )
    )


def write_bench_page(
    out_dir: Path, metrics: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> Path:
    """Write ``report.html`` into the run directory (atomically); return its path."""
    return write_page(Path(out_dir) / PAGE, render_bench_page(out_dir, metrics, rows))


def _headline(metrics: dict[str, Any]) -> tuple[str, float]:
    """(name, value) of a run's main score: accuracy for labels, strict EM for answers."""
    if metrics.get("task") == ANSWER_TASK:
        return "strict EM", float(metrics.get("exact_match", 0.0))
    return "accuracy", float(metrics.get("accuracy", 0.0))


def render_compare_page(
    dirs: Sequence[Path],
    prices: Mapping[str, Price] | None = None,
    *,
    skip_bad_rows: bool = False,
) -> str:
    """HTML of several finished runs side by side: scores, cost, latency, confusion matrices.

    Also accuracy against tokens (and USD, when ``prices`` price every run; default
    ``load_prices()``) per run with the Pareto front. Run folders are only read; damaged
    rows are refused, or with ``skip_bad_rows`` left out with a note (``check_rows``).

    Raises:
        FileNotFoundError: a directory without metrics.json.
        ValueError: label runs mixed with answer runs, a damaged run file, damaged rows.
    """
    from factdebate.bench.judging.rows import check_rows

    runs: list[dict[str, Any]] = []
    skipped = check_rows(dirs, skip_bad_rows)
    for directory in dirs:
        metrics = read_metrics(directory).as_dict()
        runs.append(
            {
                "name": Path(directory).name,
                "metrics": metrics,
                "intervals": interval_rows(metrics),
                "confusion": _png_uri(Path(directory) / CONFUSION),
                "provenance": provenance_rows(metrics.get("run", {}).get("provenance")),
            }
        )
    if len({r["metrics"].get("task") for r in runs}) > 1:
        raise RunFolderError("cannot compare label runs (claims) with answer runs (questions)")
    names = [r["name"] for r in runs]
    score_name = _headline(runs[0]["metrics"])[0] if runs else "accuracy"
    majority = {
        (str(m["label"]), float(m["accuracy"]))
        for r in runs
        if isinstance(m := r["metrics"].get("majority"), dict)
    }
    baseline = None
    if len(majority) == 1:  # one shared baseline only when every run scored the same items
        label, value = majority.pop()
        baseline = (f"majority class ({label})", value)
    plots = [
        {
            "title": f"{score_name} per run (%)",
            "src": _bars(
                names,
                {score_name: [_headline(r["metrics"])[1] for r in runs]},
                score_name,
                "%",
                percent=True,
                baseline=baseline,
            ),
        },
        {
            "title": "LLM calls per item",
            "src": _bars(
                names,
                {"calls / item": [r["metrics"]["cost"]["per_item"]["llm_calls"] for r in runs]},
                "LLM calls per item",
                "calls",
            ),
        },
        {
            "title": "Mean latency per item (seconds)",
            "src": _bars(
                names,
                {"seconds / item": [r["metrics"]["latency"]["mean_s"] for r in runs]},
                "latency per item",
                "seconds",
            ),
        },
    ]
    plots += [
        {"title": f"Confusion matrix: {r['name']}", "src": r["confusion"]}
        for r in runs
        if r["confusion"]
    ]
    task = str(runs[0]["metrics"].get("task")) if runs else ""
    tests, notes = pair_tests(dirs, task, skip_bad_rows=skip_bad_rows) if runs else ([], [])
    pareto = pareto_view(
        [(r["name"], r["metrics"]) for r in runs], load_prices() if prices is None else prices
    )
    return (
        environment()
        .get_template("bench.html.j2")
        .render(
            runs=runs,
            plots=plots,
            rows=[],
            compare=True,
            paired=tests,
            paired_notes=[*notes, *skipped],
            paired_support=paired_support(len(tests)),
            support=support_lines([r["metrics"] for r in runs], task) if runs else [],
            pareto=pareto,
        )
    )


def write_compare_page(
    path: str | Path,
    dirs: Sequence[Path],
    prices: Mapping[str, Price] | None = None,
    *,
    skip_bad_rows: bool = False,
) -> Path:
    """Write the side-by-side page of ``dirs`` to ``path`` (atomically); return the path."""
    return write_page(path, render_compare_page(dirs, prices, skip_bad_rows=skip_bad_rows))
