"""Optional LangSmith export: push a finished bench run as an experiment (off unless asked)."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from pathlib import Path
from typing import Any

from factdebate.bench.judging.scoring import FAILED, RESULTS
from factdebate.datasets import ANSWER_TASK, LABEL_TASK
from factdebate.runs.folder import RUN_FILE, RunFolderError
from factdebate.runs.reader import read_result_rows, read_run_info
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.models.llm import redact
from factdebate.tools.scoring.answers import answer_scores

__all__ = ["API_KEY_ENV", "FEEDBACK_KEY", "dataset_name", "push_run", "require_api_key"]

API_KEY_ENV = "LANGSMITH_API_KEY"
FEEDBACK_KEY = "correct"
_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-4c55-9d0e-7b2f1a9c3e10")  # stable example ids per item
_RUN_KEYS = ("method", "dataset", "limit", "seed", "task", "server_url")  # experiment metadata


def require_api_key() -> None:
    """Raise ValueError unless LANGSMITH_API_KEY is set (its value is never read out)."""
    if not os.environ.get(API_KEY_ENV, "").strip():
        raise SettingsError(
            f"LangSmith export needs {API_KEY_ENV} in the environment (it is optional: "
            "leave out --langsmith-experiment to skip it)"
        )


def dataset_name(dataset: str) -> str:
    """LangSmith dataset holding a bench dataset's items, shared by every experiment on it."""
    return f"factdebate-{dataset}"


def default_client() -> Any:
    """A ``langsmith.Client`` configured from the environment (LANGSMITH_API_KEY, _ENDPOINT)."""
    require_api_key()
    from langsmith import Client

    return Client()


def _example_id(dataset: str, item_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{dataset}:{item_id}"))


def _correct(row: dict[str, Any], task: str) -> float:
    """1.0 for a right item: the gold label, or (answers) the strict exact match."""
    if task == ANSWER_TASK:
        if isinstance(row.get("exact_match"), int | float):
            return float(row["exact_match"])
        scores = answer_scores(row.get("prediction") or [], row["gold"], row.get("wrong") or [])
        return float(scores["exact_match"])
    return float(row.get("prediction") == row["gold"])


def _read_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's run.json and rows, checked; a damaged row stops the push (nothing is written)."""
    run_file, results = run_dir / RUN_FILE, run_dir / RESULTS
    if not run_file.is_file() or not results.is_file():
        raise RunFolderError(
            f"{run_dir} is not a bench run directory (needs {RUN_FILE}, {RESULTS})"
        )
    run = read_run_info(run_dir).model_dump(mode="json", exclude_unset=True)
    rows = read_result_rows(results, run.get("task")).checked(False, "nothing is pushed")
    if not rows:
        raise RunFolderError(f"{results} holds no results to push")
    return run, rows


def _ensure_examples(
    client: Any, run: dict[str, Any], rows: list[dict[str, Any]]
) -> tuple[Any, dict[str, str], int]:
    """Find or create the dataset and add the items it lacks; return (id, item->example, new)."""
    name = dataset_name(str(run["dataset"]))
    if client.has_dataset(dataset_name=name):
        dataset = client.read_dataset(dataset_name=name)
    else:
        dataset = client.create_dataset(
            name, description=f"factdebate bench items of {run['dataset']} (inputs: item id)"
        )
    ids = {str(r["id"]): _example_id(str(run["dataset"]), str(r["id"])) for r in rows}
    found = client.list_examples(dataset_id=dataset.id, example_ids=list(ids.values()))
    existing = {str(e.id) for e in found}
    new = [
        {
            "id": uuid.UUID(ids[str(r["id"])]),
            "inputs": {"id": str(r["id"])},
            "reference_outputs": {"gold": r["gold"]},
            "metadata": {"dataset": run["dataset"]},
        }
        for r in rows
        if ids[str(r["id"])] not in existing
    ]
    if new:
        client.create_examples(dataset_id=dataset.id, examples=new)
    return dataset.id, ids, len(new)


def _outputs(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "prediction": row.get("prediction"),
        "stop_reason": row.get("stop_reason"),
        "rounds": row.get("rounds"),
        "cost": row.get("cost") or {},
        "errors": row.get("errors") or [],
        "latency": row.get("latency_s"),
    }


def push_run(
    run_dir: Path, *, experiment: str | None = None, client: Any | None = None
) -> dict[str, Any]:
    """Push a finished bench run to LangSmith as an experiment on the dataset's items.

    Each result row becomes an example of the dataset ``factdebate-<dataset>`` (inputs: item
    id; outputs: gold; created once, shared by later experiments) and a run of the experiment
    project carrying the row's outputs, with a ``correct`` feedback score (labels: prediction
    equals gold; answers: strict exact match). Nothing is re-run and nothing is written to
    ``run_dir``.

    Args:
        run_dir: Bench run directory holding ``run.json`` and ``results.jsonl``.
        experiment: Experiment (project) name; default ``<method>-<dataset>-<run dir name>``.
        client: A ``langsmith.Client``-like object; default one built from the environment.

    Returns:
        ``experiment``, ``dataset``, ``items``, ``new_examples`` and ``accuracy``.

    Raises:
        ValueError: no client and no LANGSMITH_API_KEY, or not a finished run directory.

    """
    run_dir = Path(run_dir)
    if client is None:
        require_api_key()
    run, rows = _read_run(run_dir)
    if client is None:
        client = default_client()
    task = str(run.get("task") or LABEL_TASK)
    name = experiment or f"{run['method']}-{run['dataset']}-{run_dir.name}"
    dataset_id, example_ids, new = _ensure_examples(client, run, rows)
    metadata = {k: run.get(k) for k in _RUN_KEYS if run.get(k) is not None}
    model = (run.get("context") or {}).get("model")
    if isinstance(model, str):
        metadata["model"] = redact(model)
    client.create_project(
        name,
        description=f"factdebate bench: {run['method']} on {run['dataset']}",
        metadata=metadata,
        reference_dataset_id=dataset_id,
    )
    end = dt.datetime.now(dt.UTC)
    correct = 0.0
    for row in rows:
        run_id = uuid.uuid4()
        score = _correct(row, task)
        correct += score
        latency = float(row.get("latency_s") or 0.0)
        failed = row.get("stop_reason") == FAILED
        client.create_run(
            name=str(run["method"]),
            inputs={"id": str(row["id"])},
            run_type="chain",
            project_name=name,
            id=run_id,
            reference_example_id=example_ids[str(row["id"])],
            outputs=_outputs(row),
            start_time=end - dt.timedelta(seconds=latency),
            end_time=end,
            error=redact(json.dumps(row.get("errors"), default=str))[:2000] if failed else None,
            extra={"metadata": metadata},
        )
        client.create_feedback(run_id, FEEDBACK_KEY, score=score, trace_id=run_id)
    flush = getattr(client, "flush", None)
    if callable(flush):
        flush()
    return {
        "experiment": name,
        "dataset": dataset_name(str(run["dataset"])),
        "items": len(rows),
        "new_examples": new,
        "accuracy": correct / len(rows),
    }
