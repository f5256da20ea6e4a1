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
    from factdebate.bench.items import BenchItem, load_items
    from factdebate.bench.report import compare_runs
    from factdebate.bench.rows import load_run, load_turns, run_frame, turn_frame
    from factdebate.bench.runner import arun_bench, run_bench
    from factdebate.bench.scoring import read_results

_HOME = {
    "BenchItem": "items",
    "load_items": "items",
    "compare_runs": "report",
    "load_run": "rows",
    "load_turns": "rows",
    "run_frame": "rows",
    "turn_frame": "rows",
    "arun_bench": "runner",
    "run_bench": "runner",
    "read_results": "scoring",
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
