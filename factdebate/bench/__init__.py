"""Benchmarks: run a method over a dataset, score it, report and compare runs.

The front of the package: ``run_bench`` / ``arun_bench`` run one, ``read_results`` reads a
run folder's rows, ``load_run`` / ``run_frame`` read a finished run with each item's whole
result for analysis, ``compare_runs`` puts finished runs side by side. They load on first use,
so a light module of the package (``bench --estimate``) imports no graph and no model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factdebate.bench.judging.report import compare_runs
    from factdebate.bench.judging.rows import load_run, load_turns, run_frame, turn_frame
    from factdebate.bench.judging.scoring import read_results
    from factdebate.bench.running.items import BenchItem, load_items
    from factdebate.bench.running.runner import arun_bench, run_bench

_HOME = {
    "BenchItem": "running.items",
    "load_items": "running.items",
    "compare_runs": "judging.report",
    "load_run": "judging.rows",
    "load_turns": "judging.rows",
    "run_frame": "judging.rows",
    "turn_frame": "judging.rows",
    "arun_bench": "running.runner",
    "run_bench": "running.runner",
    "read_results": "judging.scoring",
}
"""The module of the package each exported name lives in."""


def __getattr__(name: str) -> Any:
    """Import an exported name's module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)


__all__ = [
    "BenchItem",
    "arun_bench",
    "compare_runs",
    "load_items",
    "load_run",
    "load_turns",
    "read_results",
    "run_bench",
    "run_frame",
    "turn_frame",
]
