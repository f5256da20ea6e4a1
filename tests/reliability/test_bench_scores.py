"""Honest bench scores: every label of a dataset listed; failed, unparsed and budget rows apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factdebate.cli import app
from factdebate.nodes.state import MODEL_FAILURE
from tests.reliability.bench_cli import bench_args, fever_mini, runner


def averitec(root: Path, labels: tuple[str, ...]) -> Path:
    """An AVeriTeC-format dev.json under ``root/averitec`` with one claim per label."""
    records = [
        {
            "claim": f"Claim {i}.",
            "label": label,
            "questions": [{"question": f"Q{i}?", "answers": [{"answer": f"A{i}."}]}],
        }
        for i, label in enumerate(labels)
    ]
    (root / "averitec").mkdir(parents=True)
    (root / "averitec" / "dev.json").write_text(json.dumps(records), encoding="utf-8")
    return root


@pytest.mark.usefixtures("data_home")
def test_averitec_is_scored_over_its_four_labels_whatever_the_sample(
    tmp_path: Path, scripted
) -> None:
    from factdebate.bench import load_items, run_bench
    from factdebate.datasets import LABELS

    root = averitec(tmp_path / "data", ("Supported", "Refuted", "Not Enough Evidence"))
    _, labels = load_items("averitec", root, 2, 0)
    assert labels == LABELS
    name, _ = scripted([], default="The evidence pulls both ways.\n**CONFLICTING**")
    metrics = run_bench(
        "rag-cot",  # DebateCV's single-answer baseline: four labels
        "averitec",
        tmp_path / "run",
        data_dir=root,
        limit=None,
        seed=0,
        concurrency=1,
        context={"model": name},
    )
    assert metrics["labels"] == list(LABELS)
    assert (metrics["unparsed"], metrics["out_of_labels"], metrics["failed"]) == (0, 0, 0)
    assert sum(row["CONFLICTING"] for row in metrics["confusion"].values()) == 3
    assert metrics["per_class"]["CONFLICTING"]["precision"] == 0.0


@pytest.mark.usefixtures("data_home")
def test_seeded_averitec_samples_all_list_four_labels() -> None:
    from factdebate.bench import load_items
    from factdebate.datasets import CONFLICTING, LABELS
    from tests.conftest import data_or_skip

    without = 0
    for seed in range(20):
        items, labels = data_or_skip(lambda s=seed: load_items("averitec", None, 3, s), "AVeriTeC")
        assert labels == LABELS
        without += all(i.gold != CONFLICTING for i in items)
    assert without > 0  # samples without CONFLICTING gold were drawn, and still list four


@pytest.mark.usefixtures("data_home")
def test_a_verdict_outside_the_datasets_labels_is_counted_apart(tmp_path: Path, scripted) -> None:
    name, _ = scripted([], default="The evidence pulls both ways.\n**CONFLICTING**")
    out = tmp_path / "run"
    args = bench_args(out, fever_mini(tmp_path / "data"), name)
    args[args.index("cot")] = "rag-cot"  # four labels, on a three-label dataset
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert (metrics["unparsed"], metrics["out_of_labels"], metrics["failed"]) == (0, 3, 0)
    assert "| unparsed | out of labels |" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.usefixtures("data_home")
def test_items_whose_model_calls_all_failed_count_as_failed_not_unparsed(
    tmp_path: Path, scripted
) -> None:
    from factdebate.bench import run_bench

    name, _ = scripted([("", RuntimeError("provider down"))])
    metrics = run_bench(
        "debate-cv",
        "fever-mini",
        tmp_path / "run",
        data_dir=fever_mini(tmp_path / "data"),
        limit=None,
        seed=0,
        concurrency=1,
        context={"model": name, "model_retries": 0},
    )
    assert metrics["stop_reasons"] == {"moderator_error": 3}
    assert (metrics["failed"], metrics["unparsed"], metrics["accuracy"]) == (3, 0, 0.0)


@pytest.mark.usefixtures("data_home")
def test_failed_unparsed_and_budget_rows_are_told_apart() -> None:
    from factdebate.bench.judging.report import compute_metrics

    def row(pred: str | None, stop: str, *kinds: str) -> dict[str, Any]:
        errors = [{"kind": kind} for kind in kinds]
        return {"gold": "SUPPORTS", "prediction": pred, "stop_reason": stop, "errors": errors}

    rows = [
        row("SUPPORTS", "single_answer"),
        row(None, "single_answer", "parse_error"),  # a reply that could not be read
        row(None, "single_answer", "model_error"),  # its only call failed
        row(None, "round_limit", "timeout", "parse_error"),  # one call failed, one unreadable
        row(None, "error"),  # the run raised
        row(None, "budget_exhausted", "budget_exhausted"),
        row("CONFLICTING", "single_answer"),
        row("maybe", "single_answer"),  # not a verdict label: unreadable
    ]
    m = compute_metrics(rows, ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"))
    assert (m["unparsed"], m["out_of_labels"], m["failed"], m["budget_exhausted"]) == (3, 1, 2, 1)
    assert m["confusion"]["SUPPORTS"]["UNPARSED"] == 5  # the 2 failed items are not scored


def test_bench_counts_a_madam_rag_item_whose_calls_all_failed_as_failed(tmp_path: Path, scripted):
    from factdebate.bench import load_items, read_results, run_bench
    from factdebate.datasets import DatasetError

    try:
        load_items("ramdocs", None, 2, 0)
    except DatasetError as exc:
        pytest.skip(f"RAMDocs not found: {exc}")
    name, _ = scripted([("", RuntimeError("provider down"))])
    metrics = run_bench(
        "madam-rag",
        "ramdocs",
        tmp_path / "run",
        data_dir=None,
        limit=2,
        seed=0,
        concurrency=2,
        context={"model": name, "max_rounds": 1, "model_retries": 0},
    )
    assert metrics["failed"] == 2
    assert metrics["unanswered"] == 2
    assert metrics["stop_reasons"] == {MODEL_FAILURE: 2}
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert [r["prediction"] for r in rows] == [None, None]
