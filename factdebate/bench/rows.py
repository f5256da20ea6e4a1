"""A finished bench run as rows for analysis: one per item, or one per transcript turn.

Each ``results.jsonl`` row keeps the item's whole result contract under ``result`` (``None``
for an item whose run raised). ``load_run`` adds what a table needs beside it (run folder,
method, dataset, whether the item was right); ``load_turns`` spreads the transcripts out, one
row per turn with its item's gold and final verdict; ``run_frame`` / ``turn_frame`` give
the same as pandas DataFrames.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factdebate.bench.scoring import RESULTS, correct, read_results
from factdebate.evidence.exporting import calls_by_item
from factdebate.runs.folder import RunNotFoundError, read_run


def load_run(run_dir: Path | str) -> list[dict[str, Any]]:
    """The run's rows in file order, each with ``run``, ``method``, ``dataset`` and ``correct``.

    A run of ``bench --repeats N`` gives every repeat's rows (repeat 1 first), each with its
    ``repeat`` number; a run whose tools were logged gives each row its calls under
    ``evidence`` (``factdebate.evidence.exporting.calls_by_item``).

    Raises:
        RunNotFoundError: the folder has no results.jsonl.
    """
    folder = Path(run_dir)
    repeats = repeat_folders(folder)
    if not (folder / RESULTS).is_file() and not repeats:
        raise RunNotFoundError(f"no {RESULTS} in {folder}: run the benchmark first")
    run = read_run(folder)
    task = str(run.get("task") or _task_of(run))
    if (folder / RESULTS).is_file():
        parts: list[tuple[int | None, Path]] = [(None, folder)]
    else:  # `bench --repeats N`: each repeat is a run folder of its own
        wanted = int(run.get("repeats") or len(repeats))
        parts = [(r, path) for r, path in repeats if r <= wanted]
    logged = {repeat: calls_by_item(path) for repeat, path in parts}  # OUT/evidence
    return [
        {
            "run": folder.name,
            "method": run.get("method"),
            "dataset": run.get("dataset"),
            **row,
            **({"repeat": repeat} if repeat is not None else {}),
            "correct": correct(row, task),
            **(
                {"evidence": (logged[repeat] or {}).get(str(row["id"]), [])}
                if logged[repeat]
                else {}
            ),
        }
        for repeat, path in parts
        for row in read_results(path / RESULTS)
    ]


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


def _task_of(run: dict[str, Any]) -> str:
    """The scoring task of a run folder written before ``run.json`` recorded it."""
    from factdebate.datasets import dataset_task

    return dataset_task(str(run.get("dataset")))


TURN_KEYS = ("round", "agent", "tool", "label", "faithfulness", "answer_relevance")
"""The transcript keys ``load_turns`` copies (every other turn key stays in ``turn``)."""


def load_turns(run_dir: Path | str) -> list[dict[str, Any]]:
    """One row per transcript turn: the item's id, gold, prediction and outcome beside it."""
    turns: list[dict[str, Any]] = []
    for row in load_run(run_dir):
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


def run_frame(run_dirs: Sequence[Path | str] | Path | str) -> Any:
    """The rows of one or more runs as a pandas DataFrame (pandas is needed)."""
    import pandas as pd

    dirs = [run_dirs] if isinstance(run_dirs, Path | str) else list(run_dirs)
    return pd.DataFrame([row for d in dirs for row in load_run(d)])


def turn_frame(run_dirs: Sequence[Path | str] | Path | str) -> Any:
    """The turns of one or more runs as a pandas DataFrame (pandas is needed)."""
    import pandas as pd

    dirs = [run_dirs] if isinstance(run_dirs, Path | str) else list(run_dirs)
    return pd.DataFrame([turn for d in dirs for turn in load_turns(d)])
