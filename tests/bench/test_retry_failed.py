"""Rerunning a bench folder retries its failed items, and only them, keeping finished ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factdebate.bench import read_results
from factdebate.bench.running.results import RETRIED
from tests.bench.test_runner import bench, make_data

DOWN = RuntimeError("provider down")


def test_a_folder_whose_every_call_failed_is_finished_by_a_rerun(
    tmp_path: Path, data_home: Path, scripted: Any
) -> None:
    data = make_data(tmp_path / "data", "SSSS")
    name, model = scripted([("", DOWN)], default="**SUPPORTS**")
    context = {"model": name, "model_retries": 0}
    first = bench(tmp_path, data, name, context=context)
    assert (first["failed"], first["answered"], first["coverage"]) == (4, 0, 0.0)
    assert first["run"]["retried"] == {"items": 0, "still_failed": 0}
    calls_before = len(model.prompts)

    model.rules = []  # the provider is healthy again
    second = bench(tmp_path, data, name, context=context)
    assert (second["failed"], second["answered"], second["accuracy"]) == (0, 4, 1.0)
    assert second["run"]["retried"] == {"items": 4, "still_failed": 0}
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert sorted(r["id"] for r in rows) == ["0", "1", "2", "3"]
    assert all(r["prediction"] == "SUPPORTS" for r in rows)
    # the failed tries' rows are kept apart, and their calls stay in the bill
    aside = (tmp_path / "run" / RETRIED).read_text().splitlines()
    assert len(aside) == 4 and all(json.loads(line)["prediction"] is None for line in aside)
    assert second["cost"]["llm_calls"] == len(model.prompts)
    assert second["run"]["outside_rows"]["retried_rows"] == 4
    assert len(model.prompts) - calls_before == 4  # only the failed items ran again
    report = (tmp_path / "run" / "report.md").read_text()
    assert "This run retried 4 items that had failed before: 0 still failed." in report

    third = bench(tmp_path, data, name, context=context)  # nothing failed: nothing runs
    assert len(model.prompts) - calls_before == 4
    assert third["run"]["retried"] == {"items": 0, "still_failed": 0}
    assert third["cost"]["llm_calls"] == len(model.prompts)


def test_retries_only_failed_items_and_counts_those_still_failing(
    tmp_path: Path, data_home: Path, scripted: Any
) -> None:
    data = make_data(tmp_path / "data", "SSSS")
    name, model = scripted([("number 1", DOWN), ("number 2", DOWN)], default="**SUPPORTS**")
    context = {"model": name, "model_retries": 0}
    bench(tmp_path, data, name, context=context)
    model.prompts.clear()
    model.rules = [("number 2", DOWN)]  # item 1 recovers, item 2 still fails
    again = bench(tmp_path, data, name, context=context)
    assert again["run"]["retried"] == {"items": 2, "still_failed": 1}
    assert sorted(p.split("number ")[1][0] for p in model.prompts) == ["1", "2"]
    assert (again["answered"], again["failed"]) == (3, 1)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "retried 2 items that had failed before: 1 still failed" in report


def test_no_retry_failed_keeps_the_failed_rows(
    tmp_path: Path, data_home: Path, scripted: Any
) -> None:
    data = make_data(tmp_path / "data", "SS")
    name, model = scripted([("number 0", DOWN)], default="**SUPPORTS**")
    context = {"model": name, "model_retries": 0}
    bench(tmp_path, data, name, context=context)
    model.rules, calls = [], len(model.prompts)
    kept = bench(tmp_path, data, name, context=context, retry_failed=False)
    assert len(model.prompts) == calls  # nothing ran
    assert (kept["failed"], kept["run"]["retried"]["items"]) == (1, 0)
    assert not (tmp_path / "run" / RETRIED).exists()


def test_a_folder_benched_against_a_provider_failing_every_call_is_finished_against_a_healthy_one(
    tmp_path: Path, data_home: Path
) -> None:
    from tests.fake_provider import fake_provider

    data = make_data(tmp_path / "data", "SRN")
    with fake_provider(lambda prompt, body: "The claim holds.\n**SUPPORTS**", status=500) as p:
        context = {"model": p.model(), "model_retries": 0}
        first = bench(tmp_path, data, p.model(), context=context)
        assert (first["failed"], first["answered"]) == (3, 0)
        p.status = None  # the provider is healthy again
        again = bench(tmp_path, data, p.model(), context=context)
    assert (again["failed"], again["answered"], again["coverage"]) == (0, 3, 1.0)
    assert again["run"]["retried"] == {"items": 3, "still_failed": 0}
    report = (tmp_path / "run" / "report.md").read_text()
    assert "This run retried 3 items that had failed before: 0 still failed." in report
    assert "Coverage 100.0%: 3 of 3 items answered." in report


def test_repeats_retry_their_failed_items_and_the_combined_bill_keeps_every_call(
    tmp_path: Path, data_home: Path, scripted: Any
) -> None:
    from factdebate.bench.running.repeats import run_repeats

    data = make_data(tmp_path / "data", "SS")
    name, model = scripted([("number 0", DOWN)], default="**SUPPORTS**")
    args: dict[str, Any] = {"data_dir": data, "limit": None, "seed": 0, "concurrency": 2}
    context = {"model": name, "model_retries": 0}
    run_repeats("cot", "fever-mini", tmp_path / "run", repeats=2, context=context, **args)
    model.rules = []
    combined = run_repeats(
        "cot", "fever-mini", tmp_path / "run", repeats=2, context=context, **args
    )
    assert (combined["failed"], combined["answered"]) == (0, 4)
    assert combined["run"]["retried"] == {"items": 2, "still_failed": 0}
    assert combined["cost"]["llm_calls"] == len(model.prompts) == 6
