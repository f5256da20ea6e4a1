"""Matched compute: pick a self-consistency ``k`` whose cost per item equals another run's.

``bench --match-compute RUN_DIR`` reads that run's folder (``run.json``: dataset, limit,
seed, data folder; ``results.jsonl``: each row's ``cost.total``), takes its mean LLM calls
(or input + output tokens) per item, and picks the ``k`` whose expected mean is closest:

- calls: every sample of a self-consistency method is one call (the vote is counted, not
  asked), so ``k = round(mean calls)``, within half a call of the run's mean;
- tokens: a sample's tokens depend on the model and the data, so a pilot measures them:
  the method with ``k = 1`` on a seeded sample of ``PILOT_ITEMS`` items of the same dataset
  (same seed and data folder), in ``OUT/pilot``; ``k = round(run's mean / pilot's mean)``.

Items whose run raised (``stop_reason`` ``error``: no cost recorded) are left out of both
means. The baseline then runs on the same sample; ``match.json`` in its folder records how
``k`` was chosen. The run readers load on first use, so the module is light to import
(``bench --estimate`` picks a suite's ``k`` with ``pick_k``). The sample check, the pilot
and ``match_k`` run in ``running.matched``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from factdebate.datasets import CATALOG
from factdebate.graphs.registry import METHODS, resolve
from factdebate.nodes.self_consistency.context import MAX_K
from factdebate.runs.reader import RESULTS_FILE as RESULTS
from factdebate.runs.reader import read_run_info
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.files import write_atomic

MatchOn = Literal["calls", "tokens"]
MATCH_ON: tuple[MatchOn, ...] = ("calls", "tokens")
FAMILY = "self-consistency"
CALLS_PER_SAMPLE = 1.0
"""LLM calls of one self-consistency sample: one answer; retrieval and the count cost none."""
PILOT_ITEMS = 5
"""Items of the ``k = 1`` pilot that measures a sample's tokens (``--match-on tokens``)."""
MATCH_FILE = "match.json"


@dataclass(frozen=True)
class MatchTarget:
    """What a run to be matched spent and on which sample."""

    run_dir: str
    method: str
    dataset: str
    data_dir: str | None  # the datasets root (or the dataset file) it read
    limit: int | None
    seed: int
    items: int  # rows counted in the means
    calls: float  # mean LLM calls per item
    tokens: float  # mean input + output tokens per item
    items_sha256: str


def pick_k(target: float, per_sample: float, max_k: int = MAX_K) -> int:
    """The ``k`` whose cost ``k * per_sample`` is closest to ``target`` (a half rounds up).

    Raises:
        SettingsError: no positive cost per sample, or a target outside ``1..max_k`` samples.
    """
    if not per_sample > 0 or not math.isfinite(per_sample) or not math.isfinite(target):
        raise SettingsError(f"cannot match compute: a sample costs {per_sample:g}")
    k = math.floor(target / per_sample + 0.5)
    if not 1 <= k <= max_k:
        raise SettingsError(
            f"cannot match compute: the run's mean of {target:.4g} per item is "
            f"{target / per_sample:.4g} samples of {per_sample:.4g}; k must be within 1..{max_k}"
        )
    return k


def mean_cost(rows: list[dict[str, Any]]) -> tuple[int, float, float]:
    """``(items counted, mean calls, mean tokens)`` per item, failed items left out.

    The rows are the run reader's (``load_run``): their counts are checked whole numbers >= 0.
    """
    from factdebate.bench.judging.scoring import FAILED, llm_calls, tokens

    kept = [r for r in rows if r.get("stop_reason") != FAILED]
    if not kept:
        return 0, 0.0, 0.0
    n = len(kept)
    return n, sum(llm_calls(r) for r in kept) / n, sum(tokens(r) for r in kept) / n


def _data_root(dataset: str, folder: str) -> Path:
    """The datasets root a run read ``folder`` (its dataset's folder) from."""
    path = Path(folder)
    if path.is_file():
        return path
    depth = len(Path(CATALOG[dataset].folder).parts) if dataset in CATALOG else 1
    return path.parents[depth - 1]


def read_target(run_dir: Path) -> MatchTarget:
    """The sample and mean cost per item of the run in ``run_dir``.

    A run of ``bench --repeats N`` counts every repeat's rows; its sample is the one each
    repeat's own ``run.json`` records.

    Raises:
        SettingsError: no run there, a damaged run.json or row (the run reader's refusal,
            the folder left as it is), no data folder recorded, or no item with a cost.
    """
    from factdebate.bench.judging.rows import load_run, repeat_folders

    folder = Path(run_dir)
    repeats = repeat_folders(folder)
    repeated = bool(repeats) and not (folder / RESULTS).is_file()
    where = f"--match-compute {run_dir}"
    try:  # the run reader checks every field (counts whole and >= 0) and never writes
        run = read_run_info(repeats[0][1] if repeated else folder)
        rows = load_run(folder)
    except FactDebateError as exc:
        raise SettingsError(f"{where}: {exc}") from None
    data = run.data or {}
    if not data.get("folder") or not data.get("items_sha256"):
        raise SettingsError(f"{where}: run.json records no data folder, so no sample to match")
    n, calls, toks = mean_cost(rows)
    if n == 0:
        raise SettingsError(f"{where}: no finished item with a cost in {RESULTS}")
    return MatchTarget(
        run_dir=str(run_dir),
        method=run.method,
        dataset=run.dataset,
        data_dir=str(_data_root(run.dataset, str(data["folder"]))),
        limit=run.limit,
        seed=run.seed or 0,
        items=n,
        calls=calls,
        tokens=toks,
        items_sha256=str(data["items_sha256"]),
    )


def check_method(method: str) -> None:
    """Refuse a method without ``k`` (only the self-consistency family has one).

    Raises:
        SettingsError: the method is not of the self-consistency family.
    """
    if resolve(method).family != FAMILY:
        choices = ", ".join(sorted(m for m, s in METHODS.items() if s.family == FAMILY))
        raise SettingsError(
            f"--match-compute picks k: use a self-consistency method ({choices}), not {method}"
        )


def write_match(out_dir: Path, plan: dict[str, Any]) -> None:
    """Record how ``k`` was chosen in ``OUT/match.json``."""
    write_atomic(Path(out_dir) / MATCH_FILE, json.dumps(plan, indent=2) + "\n")
