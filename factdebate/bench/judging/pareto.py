"""Accuracy against cost across runs: each run's point with its interval, and the Pareto front."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from factdebate.bench.judging.prices import Price, run_usd
from factdebate.bench.judging.report import PLOT_DPI, PLOT_SIZE, literal_text
from factdebate.datasets import ANSWER_TASK

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


def wilson(right: int, n: int) -> tuple[float | None, float | None]:
    """Wilson score 95 % interval of ``right`` out of ``n`` (None, None without items).

    Used only for runs whose metrics.json has no bootstrap interval (written before
    ``factdebate.bench.judging.stats`` existed).
    """
    if n <= 0:
        return None, None
    p = right / n
    center = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, center - half), min(1.0, center + half)


def score_of(metrics: Mapping[str, Any]) -> tuple[str, float, float | None, float | None]:
    """A run's headline score (accuracy, or strict EM for answer runs) and its 95 % interval.

    The interval is the run's bootstrap interval (``metrics["intervals"]``) when it has one,
    else a Wilson score interval of its right answers.
    """
    key = "exact_match" if metrics.get("task") == ANSWER_TASK else "accuracy"
    value = float(metrics.get(key) or 0.0)
    given = (metrics.get("intervals") or {}).get(key) or {}
    if given.get("low") is not None and given.get("high") is not None:
        return key, value, float(given["low"]), float(given["high"])
    n = int(metrics.get("n") or 0)
    low, high = wilson(round(value * n), n)
    return key, value, low, high


def pareto_front(points: Sequence[tuple[str, float, float]]) -> list[str]:
    """Names of the runs on the Pareto front of ``(name, cost, score)`` points.

    A run is on it when no other run is as cheap or cheaper and as accurate or more, and
    better in one of the two.
    """
    front = []
    for name, cost, score in points:
        beaten = any(c <= cost and s >= score and (c < cost or s > score) for _, c, s in points)
        if not beaten:
            front.append(name)
    return front


def pareto_rows(
    runs: Sequence[tuple[str, Mapping[str, Any]]], prices: Mapping[str, Price]
) -> dict[str, Any]:
    """Per run: score, interval, tokens and USD per item, and whether it is on each front.

    The USD front is drawn only when every run is priced (``usd`` then is True).
    """
    rows = []
    for name, metrics in runs:
        key, score, low, high = score_of(metrics)
        per_item = metrics["cost"]["per_item"]
        rows.append(
            {
                "name": name,
                "method": (metrics.get("run") or {}).get("method"),
                "score_name": key,
                "score": score,
                "low": low,
                "high": high,
                "tokens": float(per_item["input_tokens"]) + float(per_item["output_tokens"]),
                "usd": run_usd(metrics, prices)["usd_per_item"],
            }
        )
    tokens_front = set(pareto_front([(r["name"], r["tokens"], r["score"]) for r in rows]))
    priced = bool(rows) and all(r["usd"] is not None for r in rows)
    usd_front = (
        set(pareto_front([(r["name"], r["usd"], r["score"]) for r in rows])) if priced else set()
    )
    for r in rows:
        r["front_tokens"] = r["name"] in tokens_front
        r["front_usd"] = r["name"] in usd_front if priced else None
    return {"rows": rows, "usd": priced}


@literal_text
def plot_front(rows: Sequence[Mapping[str, Any]], cost: str, xlabel: str, title: str) -> str:
    """Score against ``cost`` ("tokens" or "usd") per run, 95 % error bars, the front joined.

    Returns the PNG as a data: URI (the page loads nothing from elsewhere).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=PLOT_SIZE)
    flag = "front_tokens" if cost == "tokens" else "front_usd"
    for r in rows:
        x, y = float(r[cost]), 100 * r["score"]
        err = None
        if r["low"] is not None and r["high"] is not None:
            err = [[max(0.0, y - 100 * r["low"])], [max(0.0, 100 * r["high"] - y)]]
        on_front = bool(r[flag])
        ax.errorbar(
            [x],
            [y],
            yerr=err,
            fmt="o" if on_front else "s",
            color="#c44e52" if on_front else "#4c72b0",
            ecolor="#8c8c8c",
            capsize=3,
            markersize=7,
        )
        ax.annotate(str(r["name"]), (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    front = sorted((float(r[cost]), 100 * r["score"]) for r in rows if r[flag])
    if len(front) > 1:
        ax.plot(*zip(*front, strict=True), color="#c44e52", linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{rows[0]['score_name'].replace('_', ' ') if rows else 'score'} (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"{title} (red: the Pareto front)", fontsize=11)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=PLOT_DPI)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def pareto_view(
    runs: Sequence[tuple[str, Mapping[str, Any]]], prices: Mapping[str, Price]
) -> dict[str, Any]:
    """The compare page's Pareto section: its table rows and its plots.

    The USD plot is drawn when every run is priced and one of them cost more than $0.
    """
    found = pareto_rows(runs, prices)
    rows = found["rows"]
    plots = [
        {
            "title": "Accuracy against mean tokens per item (95 % intervals; the Pareto front)",
            "src": plot_front(rows, "tokens", "mean tokens per item (in + out)", "score vs tokens"),
            "id": "pareto-tokens",
        }
    ]
    usd_plot = found["usd"] and any(float(r["usd"]) > 0 for r in rows)  # all $0: no plot
    if usd_plot:
        plots.append(
            {
                "title": "Accuracy against USD per item (95 % intervals; the Pareto front)",
                "src": plot_front(rows, "usd", "USD per item", "score vs USD"),
                "id": "pareto-usd",
            }
        )
    return {"rows": rows, "plots": plots, "usd": found["usd"], "usd_plot": usd_plot}
