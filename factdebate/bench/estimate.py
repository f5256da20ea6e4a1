"""`bench --estimate`: expected calls, tokens and USD of a run, from measured means, no model call.

Imports nothing of the graphs or the models: it answers in well under a second.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factdebate.bench.prices import Price, role_models, usd_cost, usd_text
from factdebate.datasets import DatasetError, dataset, dataset_folder
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import read_bounded

MEASURED = Path(__file__).resolve().parents[1] / "data" / "measured_costs.json"
MAX_TABLE_BYTES = 1024**2  # the measured table and an earlier run's metrics.json
MAX_METRICS_BYTES = 64 * 1024**2
KEYS = ("llm_calls", "input_tokens", "output_tokens")


def _read_json(path: Path, limit: int, what: str) -> Any:
    text = read_bounded(path, limit, what)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{what} {path}: not JSON ({exc})") from None


def measured_means(method: str, path: Path = MEASURED) -> dict[str, Any]:
    """Per-item means by role of a method from the recorded capable-model runs.

    Raises:
        SettingsError: no measured means for that method (the message says what to pass).
    """
    table = _read_json(path, MAX_TABLE_BYTES, "measured costs")
    methods = table.get("methods") or {}
    if method not in methods:
        raise SettingsError(
            f"no measured calls and tokens for {method} (measured: {', '.join(methods)}): pass "
            "--estimate-from RUN_DIR, a finished run of it"
        )
    entry = methods[method]
    return {
        "source": entry.get("source", ""),
        "items_measured": entry.get("items"),
        "per_role": entry["per_role"],
        "by_stop_reason": {
            k: v["per_role"] for k, v in (entry.get("by_stop_reason") or {}).items()
        },
    }


def run_means(run_dir: Path) -> dict[str, Any]:
    """Per-item means by role of an earlier run folder (its metrics.json)."""
    metrics = _read_json(Path(run_dir) / "metrics.json", MAX_METRICS_BYTES, "run metrics")
    try:
        n = int(metrics["n"])
        cost = metrics["cost"]
        per_role = {**cost["per_role"], "total": {k: cost[k] for k in KEYS}}
    except (KeyError, TypeError, ValueError):
        raise SettingsError(f"{run_dir}/metrics.json has no cost summary") from None
    if n < 1:
        raise SettingsError(f"{run_dir} holds no finished item to take means from")
    run = metrics.get("run") or {}
    return {
        "source": f"{n} item(s) of {run.get('method')} on {run.get('dataset')} in {run_dir}",
        "items_measured": n,
        "method": run.get("method"),
        "per_role": {
            role: {k: float(usage.get(k, 0)) / n for k in KEYS} for role, usage in per_role.items()
        },
        "by_stop_reason": {},
    }


def count_items(name: str, data_dir: Path | None, limit: int | None) -> int:
    """Items a run would take: ``limit``, else every item of the dataset (loaded to count)."""
    if limit is not None:
        return limit
    spec = dataset(name)
    folder = dataset_folder(name, data_dir)
    try:
        loaded = spec.load(folder) if folder is not None else spec.load()
    except (DatasetError, OSError) as exc:
        raise SettingsError(
            f"cannot count the items of {name} ({str(exc).splitlines()[0]:.200}): pass --limit N"
        ) from None
    return len(loaded.items)


def _scaled(per_role: Mapping[str, Mapping[str, float]], items: int) -> dict[str, dict[str, float]]:
    return {role: {k: float(u.get(k, 0)) * items for k in KEYS} for role, u in per_role.items()}


def estimate_run(
    method: str,
    dataset_name: str,
    limit: int | None,
    context: Mapping[str, Any],
    prices: Mapping[str, Price],
    *,
    data_dir: Path | None = None,
    from_run: Path | None = None,
) -> dict[str, Any]:
    """Expected calls, tokens and USD per item and for the run; no model is loaded or called."""
    means = run_means(from_run) if from_run is not None else measured_means(method)
    items = count_items(dataset_name, data_dir, limit)
    per_role = {r: u for r, u in means["per_role"].items() if r != "total"}
    models = role_models(context, list(per_role))
    per_item = usage_and_usd(means["per_role"], models, prices, 1)
    return {
        "method": method,
        "dataset": dataset_name,
        "items": items,
        "source": means["source"],
        "items_measured": means["items_measured"],
        "models": models,
        "per_item": per_item,
        "run": usage_and_usd(means["per_role"], models, prices, items),
        "by_stop_reason": {
            reason: usage_and_usd(roles, models, prices, 1)
            for reason, roles in means["by_stop_reason"].items()
        },
    }


def usage_and_usd(
    per_role: Mapping[str, Mapping[str, float]],
    models: Mapping[str, list[str]],
    prices: Mapping[str, Price],
    items: int,
) -> dict[str, Any]:
    """Calls, tokens and USD of ``items`` items at these per-item means."""
    scaled = _scaled(per_role, items)
    total = scaled.pop("total", None) or {k: sum(u[k] for u in scaled.values()) for k in KEYS}
    return {**total, **usd_cost(scaled, models, prices)}


def render_estimate(est: Mapping[str, Any]) -> str:
    """The estimate as Markdown: a table per item and for the run, and where the means came from."""

    def row(name: str, u: Mapping[str, Any]) -> str:
        return (
            f"| {name} | {u['llm_calls']:,.1f} | {u['input_tokens']:,.0f} | "
            f"{u['output_tokens']:,.0f} | {usd_text(u['usd'])} |"
        )

    models = ", ".join(f"{r} {' / '.join(m) or '(none)'}" for r, m in est["models"].items())
    lines = [
        f"# Estimate: {est['method']} on {est['dataset']}, {est['items']} item(s)",
        "",
        "| | LLM calls | input tokens | output tokens | USD |",
        "|---|---:|---:|---:|---:|",
        row("per item", est["per_item"]),
        row(f"whole run ({est['items']} items)", est["run"]),
        *(row(f"per item, {r}", u) for r, u in est["by_stop_reason"].items()),
        "",
        f"Means from {est['source']}. Models: {models}.",
    ]
    unpriced = sorted(set(est["per_item"]["unpriced"]))
    if unpriced:
        lines.append(
            f"Unpriced: {', '.join(unpriced)} (set a price with --price MODEL=IN,OUT, USD per "
            "million tokens, or in the prices file)."
        )
    lines.append("Nothing was run and no model was called.")
    return "\n".join(lines) + "\n"
