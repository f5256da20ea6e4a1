"""Bench reports: metrics from result rows, and which runs compare side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factdebate.bench.judging.report import compare_runs, compute_metrics


def test_compute_metrics_on_hand_values() -> None:
    rows = [
        {
            "gold": "SUPPORTS",
            "prediction": "SUPPORTS",
            "stop_reason": "consensus",
            "rounds": 1,
            "latency_s": 1.0,
            "errors": [],
            "cost": {
                "debater": {"llm_calls": 2, "input_tokens": 10, "output_tokens": 4},
                "total": {"llm_calls": 2, "input_tokens": 10, "output_tokens": 4},
            },
        },
        {
            "gold": "REFUTES",
            "prediction": None,
            "stop_reason": "round_limit",
            "rounds": 3,
            "latency_s": 3.0,
            "errors": [{"kind": "parse_error"}],
            "cost": {
                "judge": {"llm_calls": 1, "input_tokens": 20, "output_tokens": 6},
                "total": {"llm_calls": 1, "input_tokens": 20, "output_tokens": 6},
            },
        },
        {
            "gold": "REFUTES",
            "prediction": "SUPPORTS",
            "stop_reason": "error",
            "rounds": 0,
            "latency_s": 2.0,
            "errors": [{"kind": "exception"}],
            "cost": {},
        },
    ]
    m = compute_metrics(rows, ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"))
    # the failed item (its run raised) is a fault, not a wrong answer: scores are over 2 items
    assert (m["n"], m["answered"], m["coverage"]) == (3, 2, pytest.approx(2 / 3))
    assert m["accuracy"] == pytest.approx(1 / 2)
    assert m["unparsed"] == 1 and m["failed"] == 1 and m["items_with_errors"] == 2
    assert m["per_class"]["SUPPORTS"]["precision"] == pytest.approx(1.0)
    assert m["per_class"]["SUPPORTS"]["f1"] == pytest.approx(1.0)
    assert m["macro_f1"] == pytest.approx(1 / 3)
    assert m["confusion"]["REFUTES"] == {
        "SUPPORTS": 0,
        "REFUTES": 0,
        "NOT ENOUGH INFO": 0,
        "UNPARSED": 1,
    }
    assert m["cost"]["llm_calls"] == 3 and m["cost"]["input_tokens"] == 30
    assert m["cost"]["per_item"]["output_tokens"] == pytest.approx(10 / 3)
    assert m["cost"]["per_role"]["judge"]["llm_calls"] == 1
    assert m["latency"]["mean_s"] == pytest.approx(2.0) and m["latency"]["p50_s"] == 2.0
    assert m["latency"]["max_s"] == 3.0
    assert m["error_kinds"] == {"exception": 1, "parse_error": 1}
    assert m["mean_rounds"] == pytest.approx(4 / 3)


def test_compare_refuses_label_and_answer_runs_together(tmp_path: Path) -> None:
    counts = {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0}
    cost = {**counts, "per_item": counts}
    for name, task, score in (("labels", "labels", "accuracy"), ("answers", "answers", "f1")):
        metrics = {"task": task, "n": 0, score: 0.0, "exact_match": 0.0, "cost": cost}
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.json").write_text(
            json.dumps({**metrics, "latency": {"mean_s": 0.0}})
        )
    with pytest.raises(ValueError, match="cannot compare"):
        compare_runs([tmp_path / "labels", tmp_path / "answers"])


def test_report_says_which_classes_macro_f1_averages(tmp_path: Path) -> None:
    """A three-label run whose items hold two labels: both macro-F1s, each with its classes."""
    from factdebate.bench.judging.report import render_report

    rows = [
        {"id": str(i), "gold": g, "prediction": p, "stop_reason": "consensus", "rounds": 1}
        | {"errors": [], "cost": {}, "latency_s": 1.0}
        for i, (g, p) in enumerate([("SUPPORTS", "SUPPORTS"), ("REFUTES", "SUPPORTS")])
    ]
    metrics = compute_metrics(rows, ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"))
    report = render_report(metrics, {"method": "cot", "dataset": "x"})
    assert metrics["macro_f1"] == pytest.approx((2 / 3) / 3)  # SUPPORTS' F1 over three labels
    assert (
        "Macro-F1 averages the F1 of all 3 labels of the dataset (SUPPORTS, REFUTES, NOT ENOUGH "
        "INFO); a label neither in gold nor predicted scores 0. Over the 2 labels in gold or "
        "predictions (SUPPORTS, REFUTES) it is 33.3." in report
    )
    from factdebate.bench.judging.page import render_bench_page

    metrics |= {"run": {"method": "cot", "dataset": "x", "context": {}}, "task": "labels"}
    page = render_bench_page(tmp_path, metrics, rows)
    assert '22.2 <span class="muted">(33.3 over SUPPORTS, REFUTES)</span>' in page
