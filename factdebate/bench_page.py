"""The bench run as one self-contained HTML page with plots (and several runs side by side)."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factdebate.bench_report import ANSWERS
from factdebate.report_page import environment, write_page

PAGE = "report.html"
CONFUSION = "confusion.png"


def _figure(width: float, height: float) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def _data_uri(fig: Any) -> str:
    """PNG of ``fig`` as a data: URI (the page loads nothing from elsewhere); closes it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _png_uri(path: Path) -> str | None:
    """An existing PNG (the run's confusion matrix) as a data: URI, if it is there."""
    if not path.is_file():
        return None
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _bars(
    groups: Sequence[str], series: Mapping[str, Sequence[float]], title: str, ylabel: str
) -> str:
    """Grouped bar chart: one group per name in ``groups``, one bar per series."""
    fig, ax = _figure(max(4.0, 1.4 + 1.1 * len(groups) * max(1, len(series)) / 2), 3.2)
    width = 0.8 / max(1, len(series))
    for n, (name, values) in enumerate(series.items()):
        ax.bar([i + n * width for i in range(len(groups))], values, width, label=name)
    ax.set_xticks(
        [i + width * (len(series) - 1) / 2 for i in range(len(groups))],
        [g.replace(" ", "\n") for g in groups],
        fontsize=8,
    )
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return _data_uri(fig)


def _counts(counts: dict[str, int], title: str, xlabel: str) -> str:
    fig, ax = _figure(max(4.0, 1.5 + 0.9 * len(counts)), 3.0)
    names = list(counts)
    ax.bar(range(len(names)), [counts[k] for k in names], color="#4c72b0")
    ax.set_xticks(range(len(names)), [k.replace("_", "\n") for k in names], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("items")
    ax.set_title(title, fontsize=10)
    return _data_uri(fig)


def _per_item(rows: Sequence[dict[str, Any]]) -> str:
    """Latency and tokens of each item, in dataset order (two panels)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latency = [float(r.get("latency_s") or 0.0) for r in rows]
    total = [(r.get("cost") or {}).get("total", {}) for r in rows]
    tokens = [int(t.get("input_tokens", 0)) + int(t.get("output_tokens", 0)) for t in total]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.0))
    left.bar(range(1, len(rows) + 1), latency, color="#55a868")
    left.set_xlabel("item")
    left.set_ylabel("seconds")
    left.set_title("latency per item", fontsize=10)
    right.bar(range(1, len(rows) + 1), tokens, color="#c44e52")
    right.set_xlabel("item")
    right.set_ylabel("tokens (in + out)")
    right.set_title("cost per item", fontsize=10)
    return _data_uri(fig)


def run_plots(
    out_dir: Path, metrics: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> list[dict[str, str]]:
    """The plots of one run: confusion matrix, per-class scores, rounds, stop reasons, cost."""
    plots: list[dict[str, str]] = []
    confusion = _png_uri(out_dir / CONFUSION)
    if confusion:
        plots.append({"title": "Confusion matrix (rows gold, columns predicted)", "src": confusion})
    if metrics.get("task") == ANSWERS:
        names = ["exact_match", "precision", "recall", "f1"]
        plots.append(
            {
                "title": "Answer scores",
                "src": _bars(names, {"mean": [metrics[k] for k in names]}, "answers", "score"),
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
                "title": "Per-class precision, recall and F1",
                "src": _bars(classes, series, "per class", "score"),
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
        plots.append({"title": "Latency and cost per item", "src": _per_item(rows)})
    return plots


def render_bench_page(
    out_dir: Path, metrics: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> str:
    """HTML of one bench run: headline scores, plots, cost per role, the items' outcomes."""
    return (
        environment()
        .get_template("bench.html.j2")
        .render(
            runs=[{"name": Path(out_dir).name, "metrics": metrics}],
            plots=run_plots(Path(out_dir), metrics, rows),
            rows=list(rows),
            compare=False,
        )
    )


def write_bench_page(
    out_dir: Path, metrics: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> Path:
    """Write ``report.html`` into the run directory (atomically); return its path."""
    return write_page(Path(out_dir) / PAGE, render_bench_page(out_dir, metrics, rows))


def _headline(metrics: dict[str, Any]) -> tuple[str, str]:
    """(name, value) of a run's main score: accuracy for labels, strict EM for answers."""
    if metrics.get("task") == ANSWERS:
        return "strict EM", metrics.get("exact_match", 0.0)
    return "accuracy", metrics.get("accuracy", 0.0)


def render_compare_page(dirs: Sequence[Path]) -> str:
    """HTML of several finished runs side by side: scores, cost, latency, confusion matrices.

    Raises:
        FileNotFoundError: a directory without metrics.json.
        ValueError: label runs mixed with answer runs.
    """
    runs = []
    for directory in dirs:
        path = Path(directory) / "metrics.json"
        if not path.is_file():
            raise FileNotFoundError(f"no metrics.json in {directory}: run the benchmark first")
        metrics = json.loads(path.read_text(encoding="utf-8"))
        runs.append(
            {
                "name": Path(directory).name,
                "metrics": metrics,
                "confusion": _png_uri(Path(directory) / CONFUSION),
            }
        )
    if len({r["metrics"].get("task") for r in runs}) > 1:
        raise ValueError("cannot compare label runs (claims) with answer runs (questions)")
    names = [r["name"] for r in runs]
    score_name = _headline(runs[0]["metrics"])[0] if runs else "accuracy"
    plots = [
        {
            "title": f"{score_name} per run",
            "src": _bars(
                names,
                {score_name: [float(_headline(r["metrics"])[1]) for r in runs]},
                score_name,
                "score",
            ),
        },
        {
            "title": "LLM calls and mean latency per item",
            "src": _bars(
                names,
                {
                    "calls / item": [r["metrics"]["cost"]["per_item"]["llm_calls"] for r in runs],
                    "latency s / item": [r["metrics"]["latency"]["mean_s"] for r in runs],
                },
                "cost and latency",
                "per item",
            ),
        },
    ]
    plots += [
        {"title": f"Confusion matrix: {r['name']}", "src": r["confusion"]}
        for r in runs
        if r["confusion"]
    ]
    return (
        environment()
        .get_template("bench.html.j2")
        .render(runs=runs, plots=plots, rows=[], compare=True)
    )


def write_compare_page(path: str | Path, dirs: Sequence[Path]) -> Path:
    """Write the side-by-side page of ``dirs`` to ``path`` (atomically); return the path."""
    return write_page(path, render_compare_page(dirs))
