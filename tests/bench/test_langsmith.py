"""LangSmith export of bench runs: examples, runs and feedback pushed through a fake client."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.scoring import RESULTS
from factdebate.bench.running import langsmith as langsmith_export
from factdebate.bench.running.langsmith import push_run
from factdebate.cli import app
from factdebate.runs.folder import RUN_FILE

runner = CliRunner()
SECRET = "lsv2-test-secret-value-123"


class FakeClient:
    """Records every call the exporter makes, like a langsmith.Client that never connects."""

    def __init__(self, existing: list[str] | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.datasets: dict[str, SimpleNamespace] = {}
        self.existing = list(existing or [])
        self.flushed = False

    def _log(self, method: str, /, **kwargs: Any) -> None:
        self.calls.append((method, kwargs))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [kw for n, kw in self.calls if n == name]

    def has_dataset(self, *, dataset_name: str) -> bool:
        return dataset_name in self.datasets

    def read_dataset(self, *, dataset_name: str) -> SimpleNamespace:
        return self.datasets[dataset_name]

    def create_dataset(self, dataset_name: str, **kwargs: Any) -> SimpleNamespace:
        self._log("create_dataset", dataset_name=dataset_name, **kwargs)
        self.datasets[dataset_name] = SimpleNamespace(id=f"ds-{len(self.datasets)}")
        return self.datasets[dataset_name]

    def list_examples(self, *, dataset_id: str, example_ids: list[str]) -> list[SimpleNamespace]:
        return [SimpleNamespace(id=i) for i in self.existing if i in example_ids]

    def create_examples(self, *, dataset_id: str, examples: list[dict[str, Any]]) -> None:
        self._log("create_examples", dataset_id=dataset_id, examples=examples)
        self.existing += [str(e["id"]) for e in examples]

    def create_project(self, project_name: str, **kwargs: Any) -> None:
        self._log("create_project", project_name=project_name, **kwargs)

    def create_run(self, **kwargs: Any) -> None:
        self._log("create_run", **kwargs)

    def create_feedback(self, run_id: Any, key: str, **kwargs: Any) -> None:
        self._log("create_feedback", run_id=run_id, key=key, **kwargs)

    def flush(self) -> None:
        self.flushed = True


def _row(
    id_: str, gold: Any, prediction: Any, stop: str = "consensus", **extra: Any
) -> dict[str, Any]:
    # the shape factdebate.bench.running.runner._row writes
    return {
        "id": id_,
        "gold": gold,
        **extra,
        "prediction": prediction,
        "stop_reason": stop,
        "rounds": 2,
        "cost": {"total": {"llm_calls": 3, "input_tokens": 100, "output_tokens": 20}},
        "latency_s": 1.25,
        "errors": [],
    }


def _write_run(path: Path, rows: list[dict[str, Any]], **run: Any) -> Path:
    path.mkdir(parents=True)
    meta = {
        "method": "cot",
        "dataset": "fever-mini",
        "limit": len(rows),
        "seed": 0,
        "context": {"model": "scripted-x"},
        "server_url": None,
        "task": "labels",
        **run,
    }
    (path / RUN_FILE).write_text(json.dumps(meta), encoding="utf-8")
    (path / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def label_run(tmp_path: Path) -> Path:
    failed = _row("c3", "NOT ENOUGH INFO", None, stop="error")
    failed["errors"] = [{"kind": "exception", "stage": "run", "message": "boom"}]
    rows = [_row("c1", "SUPPORTS", "SUPPORTS"), _row("c2", "REFUTES", "SUPPORTS"), failed]
    return _write_run(tmp_path / "run", rows)


def test_label_run_becomes_examples_runs_and_feedback(label_run: Path) -> None:
    client = FakeClient()
    before = sorted(p.name for p in label_run.iterdir())
    summary = push_run(label_run, experiment="cot-try", client=client)

    assert summary == {
        "experiment": "cot-try",
        "dataset": "factdebate-fever-mini",
        "items": 3,
        "new_examples": 3,
        "accuracy": pytest.approx(1 / 3),
    }
    (created,) = client.named("create_examples")
    assert [e["inputs"] for e in created["examples"]] == [{"id": "c1"}, {"id": "c2"}, {"id": "c3"}]
    assert [e["reference_outputs"] for e in created["examples"]] == [
        {"gold": "SUPPORTS"},
        {"gold": "REFUTES"},
        {"gold": "NOT ENOUGH INFO"},
    ]
    (project,) = client.named("create_project")
    assert project["project_name"] == "cot-try"
    assert project["reference_dataset_id"] == created["dataset_id"]
    assert project["metadata"]["method"] == "cot" and project["metadata"]["model"] == "scripted-x"

    runs = client.named("create_run")
    assert [r["project_name"] for r in runs] == ["cot-try"] * 3
    assert [r["reference_example_id"] for r in runs] == [str(e["id"]) for e in created["examples"]]
    assert runs[0]["outputs"] == {
        "prediction": "SUPPORTS",
        "stop_reason": "consensus",
        "rounds": 2,
        "cost": {"total": {"llm_calls": 3, "input_tokens": 100, "output_tokens": 20}},
        "errors": [],
        "latency": 1.25,
    }
    assert (runs[0]["end_time"] - runs[0]["start_time"]).total_seconds() == pytest.approx(1.25)
    assert runs[0]["error"] is None and "boom" in runs[2]["error"]

    feedback = client.named("create_feedback")
    assert [f["key"] for f in feedback] == ["correct"] * 3
    assert [f["score"] for f in feedback] == [1.0, 0.0, 0.0]
    assert [f["run_id"] for f in feedback] == [r["id"] for r in runs]
    assert client.flushed
    assert sorted(p.name for p in label_run.iterdir()) == before  # nothing written


def test_calls_fit_the_installed_sdk(label_run: Path) -> None:
    import inspect

    from langsmith import Client
    from langsmith.schemas import ExampleCreate

    client = FakeClient()
    push_run(label_run, experiment="x", client=client)
    for method, kwargs in client.calls:
        args = [kwargs.pop(k)] if (k := _POSITIONAL.get(method)) else []
        inspect.signature(getattr(Client, method)).bind(None, *args, **kwargs)
    for example in client.named("create_examples")[0]["examples"]:
        as_sdk: Any = ExampleCreate  # the SDK builds these from our dicts (untyped __init__)
        assert as_sdk(**example).reference_outputs == example["reference_outputs"]


_POSITIONAL = {
    "create_dataset": "dataset_name",
    "create_project": "project_name",
    "create_feedback": "run_id",
}


def test_second_push_reuses_dataset_and_examples(label_run: Path) -> None:
    client = FakeClient()
    push_run(label_run, experiment="first", client=client)
    again = push_run(label_run, client=client)
    assert again["new_examples"] == 0 and again["experiment"] == "cot-fever-mini-run"
    assert len(client.named("create_dataset")) == 1 and len(client.named("create_examples")) == 1
    first, second = client.named("create_run")[:3], client.named("create_run")[3:]
    assert [r["reference_example_id"] for r in first] == [r["reference_example_id"] for r in second]


def test_answer_rows_scored_by_strict_exact_match(tmp_path: Path) -> None:
    rows = [
        _row("q1", ["Paris"], ["Paris"], wrong=["Lyon"]),
        _row("q2", ["Paris"], ["Paris", "Lyon"], wrong=["Lyon"]),  # misinformation given
        _row("q3", ["Paris"], ["Rome"], exact_match=1.0),  # a stored score wins
    ]
    run = _write_run(tmp_path / "qa", rows, method="madam-rag", dataset="ramdocs", task="answers")
    client = FakeClient()
    summary = push_run(run, experiment="qa", client=client)
    assert [f["score"] for f in client.named("create_feedback")] == [1.0, 0.0, 1.0]
    examples = client.named("create_examples")[0]["examples"]
    assert examples[1]["reference_outputs"] == {"gold": ["Paris"]}
    assert summary["dataset"] == "factdebate-ramdocs"


def test_missing_key_without_client_is_a_value_error(
    label_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    with pytest.raises(ValueError, match="LANGSMITH_API_KEY"):
        push_run(label_run)


def test_not_a_run_dir_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a bench run directory"):
        push_run(tmp_path, client=FakeClient())


def _bench_args(name: str, out: Path, *extra: str) -> list[str]:
    return [
        "bench",
        "--method",
        "cot",
        "--dataset",
        "fever-mini",
        "--limit",
        "2",
        "--model",
        name,
        "--out",
        str(out),
        *extra,
    ]


def _need_fever() -> None:
    from factdebate.datasets import datasets_root

    if not (datasets_root("fever") / "fever").exists():
        pytest.skip(f"benchmark data not found at {datasets_root('fever')}")


def test_cli_flag_without_key_fails_in_one_line(
    tmp_path: Path, data_home: Path, scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    result = runner.invoke(app, _bench_args(name, tmp_path / "run", "--langsmith-experiment", "x"))
    assert result.exit_code == 2
    assert "LANGSMITH_API_KEY" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()  # refused before spending a run


def test_cli_flag_pushes_after_the_run(
    tmp_path: Path, data_home: Path, scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need_fever()
    monkeypatch.setenv("LANGSMITH_API_KEY", SECRET)
    client = FakeClient()
    monkeypatch.setattr(langsmith_export, "default_client", lambda: client)
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = tmp_path / "run"
    result = runner.invoke(app, _bench_args(name, run, "--langsmith-experiment", "cot-ci"))
    assert result.exit_code == 0, result.output
    assert "LangSmith experiment cot-ci: 2 items pushed" in result.output
    assert len(client.named("create_run")) == 2 and len(client.named("create_feedback")) == 2
    on_disk = "".join(
        p.read_text(encoding="utf-8") for p in run.iterdir() if p.is_file() and p.suffix != ".png"
    )
    assert SECRET not in on_disk and SECRET not in result.output


def test_cli_push_error_is_one_line_and_redacted(
    tmp_path: Path, data_home: Path, scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need_fever()
    monkeypatch.setenv("LANGSMITH_API_KEY", SECRET)

    def broken() -> Any:
        raise ConnectionError(f"refused for key {SECRET}\nsecond line")

    monkeypatch.setattr(langsmith_export, "default_client", broken)
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = tmp_path / "run"
    result = runner.invoke(app, _bench_args(name, run, "--langsmith-experiment", "x"))
    assert result.exit_code == 2
    assert "LangSmith export failed: ConnectionError" in result.output
    assert SECRET not in result.output and "second line" not in result.output
    assert (run / "results.jsonl").is_file()  # the run itself is kept
