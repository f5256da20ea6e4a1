"""Matched compute, the part that runs: check the sample, run the ``k = 1`` pilot, record ``k``.

What is matched and how ``k`` is chosen from it live in ``judging.matching``; here the sample
is checked against the run to match, a pilot measures one sample's tokens when asked, and
``match.json`` is written in the baseline's folder.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from factdebate.bench.judging.matching import (
    CALLS_PER_SAMPLE,
    MATCH_ON,
    PILOT_ITEMS,
    MatchOn,
    MatchTarget,
    check_method,
    mean_cost,
    pick_k,
    read_target,
    write_match,
)
from factdebate.bench.running.items import data_identity, load_items
from factdebate.datasets import DatasetError
from factdebate.tools.core.errors import SettingsError


def check_same_sample(target: MatchTarget) -> None:
    """Refuse when the run's data changed since: the baseline would run on other items.

    Raises:
        SettingsError: the dataset cannot be loaded or its sampled items differ.
    """
    root = Path(target.data_dir) if target.data_dir else None
    try:
        items, _ = load_items(target.dataset, root, target.limit, target.seed)
    except DatasetError as exc:
        raise SettingsError(f"--match-compute {target.run_dir}: {exc}") from None
    if data_identity(target.dataset, root, items)["items_sha256"] != target.items_sha256:
        raise SettingsError(
            f"--match-compute {target.run_dir}: the items of {target.dataset} under "
            f"{target.data_dir} changed since that run, so it is not the same sample"
        )


def tokens_per_sample(
    method: str, target: MatchTarget, out_dir: Path, context: dict[str, Any], concurrency: int
) -> float:
    """Measure one sample's mean tokens: a ``k = 1`` pilot in ``out_dir/pilot``."""
    from factdebate.bench.judging.rows import load_run
    from factdebate.bench.running.runner import run_bench

    pilot = Path(out_dir) / "pilot"
    limit = min(PILOT_ITEMS, target.limit or PILOT_ITEMS)
    run_bench(
        method,
        target.dataset,
        pilot,
        data_dir=Path(target.data_dir) if target.data_dir else None,
        limit=limit,
        seed=target.seed,
        concurrency=concurrency,
        context={**context, "k": 1},
    )
    n, _, toks = mean_cost(load_run(pilot))
    if n == 0:
        raise SettingsError("--match-on tokens: every item of the pilot failed (see pilot/)")
    return toks


def plan_k(
    method: str,
    target: MatchTarget,
    on: MatchOn,
    out_dir: Path,
    context: dict[str, Any],
    concurrency: int = 1,
) -> dict[str, Any]:
    """Choose ``k`` for ``method`` to match ``target`` on ``on``: the record for match.json."""
    if on == "calls":
        wanted, per_sample = target.calls, CALLS_PER_SAMPLE
    else:
        wanted = target.tokens
        per_sample = tokens_per_sample(method, target, out_dir, context, concurrency)
    k = pick_k(wanted, per_sample)
    return {
        "on": on,
        "k": k,
        "target_per_item": round(wanted, 4),
        "per_sample": round(per_sample, 4),
        "expected_per_item": round(k * per_sample, 4),
        "pilot": "pilot" if on == "tokens" else None,
        "target": asdict(target),
    }


def match_k(
    method: str,
    run_dir: Path,
    on: str,
    out_dir: Path,
    context: dict[str, Any],
    concurrency: int = 1,
) -> dict[str, Any]:
    """Choose ``k`` for ``method`` to match the run in ``run_dir`` and record it in ``out_dir``.

    Returns the record written to ``match.json`` (``k``, what was matched, the target run).

    Raises:
        SettingsError: a bad ``on``, a method without ``k``, a ``k`` already set, no run to
            match, or a sample that changed since.
    """
    from factdebate.runs.folder import make_out_dir

    if on not in MATCH_ON:
        raise SettingsError(f"--match-on must be calls or tokens, got {on!r}")
    check_method(method)
    if "k" in context:
        raise SettingsError("--match-compute picks k itself: drop --set k=...")
    target = read_target(run_dir)
    check_same_sample(target)
    plan = plan_k(method, target, on, out_dir, context, concurrency)
    make_out_dir(out_dir)
    write_match(out_dir, plan)
    return plan
