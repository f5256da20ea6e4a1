"""Benchmarks: run a method over a dataset, score it, report and compare runs.

The front of the package: ``run_bench`` / ``arun_bench`` run one, ``read_results`` reads a
run folder's rows, ``load_run`` / ``run_frame`` read a finished run with each item's whole
result for analysis, ``compare_runs`` puts finished runs side by side.
"""

from factdebate.bench.items import BenchItem, load_items
from factdebate.bench.report import compare_runs
from factdebate.bench.rows import load_run, load_turns, run_frame, turn_frame
from factdebate.bench.runner import arun_bench, run_bench
from factdebate.bench.scoring import read_results

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
