"""A finished bench run as rows for analysis: one per item, or one per transcript turn.

Each ``results.jsonl`` row keeps the item's whole result contract under ``result`` (``None``
for an item whose run raised). ``load_run`` adds what a table needs beside it (run folder,
method, dataset, whether the item was right); ``load_turns`` spreads the transcripts out, one
row per turn with its item's gold and final verdict; ``run_frame`` / ``turn_frame`` give
the same as pandas DataFrames.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factdebate.bench.judging.scoring import RESULTS, correct
from factdebate.evidence.exporting import calls_by_item
from factdebate.runs.folder import RunNotFoundError
from factdebate.runs.reader import (
    RowProblem,
    RunInfo,
    RunReadError,
    problems_text,
    read_result_rows,
    read_run_info,
    skipped_note,
)

log = logging.getLogger("factdebate")


def load_run(run_dir: Path | str, *, skip_bad_rows: bool = False) -> list[dict[str, Any]]:
    """The run's rows in file order, each with ``run``, ``method``, ``dataset`` and ``correct``.

    A run of ``bench --repeats N`` gives every repeat's rows (repeat 1 first), each with its
    ``repeat`` number; a run whose tools were logged gives each row its calls under
    ``evidence`` (``factdebate.evidence.exporting.calls_by_item``).
    Nothing is written: a damaged row (torn, out of bounds, a repeated id)
    stops the read with every problem named, or with ``skip_bad_rows`` is left out and logged.

    Raises:
        RunNotFoundError: the folder has no results.jsonl (or no run.json).
        RunReadError: run.json is damaged, or a row is and ``skip_bad_rows`` is not set.
    """
    folder = Path(run_dir)
    repeats = repeat_folders(folder)
    if not (folder / RESULTS).is_file() and not repeats:
        raise RunNotFoundError(f"no {RESULTS} in {folder}: run the benchmark first")
    run = read_run_info(folder)
    task = run.task or _task_of(run)
    if (folder / RESULTS).is_file():
        parts: list[tuple[int | None, Path]] = [(None, folder)]
    else:  # `bench --repeats N`: each repeat is a run folder of its own
        wanted = run.repeats or len(repeats)
        parts = [(r, path) for r, path in repeats if r <= wanted]
    rows = []
    for repeat, path in parts:
        found = read_result_rows(path / RESULTS, task)
        evidence = calls_by_item(path)  # what each item's tools returned (OUT/evidence)
        for problem in found.problems if skip_bad_rows else ():
            log.warning("skipped: %s", problem)
        for row in found.checked(skip_bad_rows, "load_run(..., skip_bad_rows=True) skips them"):
            rows.append(
                {
                    "run": folder.name,
                    "method": run.method,
                    "dataset": run.dataset,
                    **row,
                    **({"repeat": repeat} if repeat is not None else {}),
                    "correct": correct(row, task),
                    **({"evidence": evidence.get(str(row["id"]), [])} if evidence else {}),
                }
            )
    return rows


def run_problems(run_dir: Path | str) -> list[RowProblem]:
    """Every damaged row of a run folder, every repeat's too (nothing is written)."""
    folder = Path(run_dir)
    paths = [folder / RESULTS] if (folder / RESULTS).is_file() else []
    paths = paths or [path / RESULTS for _, path in repeat_folders(folder)]
    return [problem for path in paths for problem in read_result_rows(path).problems]


def check_rows(run_dirs: Sequence[Path | str], skip_bad_rows: bool) -> list[str]:
    """The rule of every comparison: refuse runs with damaged rows, or say what is skipped.

    Returns one note per run whose damaged rows are left out (with ``skip_bad_rows``).

    Raises:
        RunReadError: a run has damaged rows and ``skip_bad_rows`` is not set.
    """
    notes = []
    for folder in run_dirs:
        problems = run_problems(folder)
        if problems and not skip_bad_rows:
            raise RunReadError(
                f"{Path(folder).name}: {problems_text(problems)}; nothing was changed "
                "(--skip-bad-rows compares the other rows and says how many it skipped)"
            )
        if problems:
            notes.append(skipped_note(Path(folder).name, problems))
    return notes


REPEAT_PREFIX = "repeat-"
"""``bench --repeats N`` runs repeat r into the run folder ``OUT/repeat-r`` (r = 1..N)."""


def repeat_folders(folder: Path) -> list[tuple[int, Path]]:
    """The numbered repeat folders holding results under ``folder``, by repeat number."""
    found = []
    if folder.is_dir():
        for child in folder.iterdir():
            number = child.name.removeprefix(REPEAT_PREFIX)
            numbered = child.name.startswith(REPEAT_PREFIX) and number.isdigit()
            if numbered and (child / RESULTS).is_file():
                found.append((int(number), child))
    return sorted(found)


def _task_of(run: RunInfo) -> str:
    """The scoring task of a run folder written before ``run.json`` recorded it.

    Raises:
        RunReadError: the dataset is not one the benchmark knows.
    """
    from factdebate.datasets import dataset_task

    try:
        return dataset_task(run.dataset)
    except (KeyError, ValueError) as exc:
        raise RunReadError(f"run file: unknown dataset {run.dataset!r:.80} ({exc})") from None


TURN_KEYS = ("round", "agent", "tool", "label", "faithfulness", "answer_relevance")
"""The transcript keys ``load_turns`` copies (every other turn key stays in ``turn``)."""


def load_turns(run_dir: Path | str, *, skip_bad_rows: bool = False) -> list[dict[str, Any]]:
    """One row per transcript turn: the item's id, gold, prediction and outcome beside it.

    Raises:
        RunNotFoundError, RunReadError: see ``load_run``.
    """
    turns: list[dict[str, Any]] = []
    for row in load_run(run_dir, skip_bad_rows=skip_bad_rows):
        result = row.get("result") or {}
        for turn in result.get("transcript") or []:
            turns.append(
                {
                    "run": row["run"],
                    "id": row["id"],
                    **({"repeat": row["repeat"]} if "repeat" in row else {}),
                    "gold": row["gold"],
                    "prediction": row.get("prediction"),
                    "correct": row["correct"],
                    "stop_reason": row.get("stop_reason"),
                    **{key: turn.get(key) for key in TURN_KEYS},
                    "turn": turn,
                }
            )
    return turns


def run_frame(run_dirs: Sequence[Path | str] | Path | str, *, skip_bad_rows: bool = False) -> Any:
    """The rows of one or more runs as a pandas DataFrame (pandas is needed; see ``load_run``)."""
    import pandas as pd

    dirs = [run_dirs] if isinstance(run_dirs, Path | str) else list(run_dirs)
    return pd.DataFrame([row for d in dirs for row in load_run(d, skip_bad_rows=skip_bad_rows)])


def turn_frame(run_dirs: Sequence[Path | str] | Path | str, *, skip_bad_rows: bool = False) -> Any:
    """The turns of one or more runs as a pandas DataFrame (pandas is needed; see ``load_run``)."""
    import pandas as pd

    dirs = [run_dirs] if isinstance(run_dirs, Path | str) else list(run_dirs)
    return pd.DataFrame([turn for d in dirs for turn in load_turns(d, skip_bad_rows=skip_bad_rows)])
