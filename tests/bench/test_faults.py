"""A fault is never a wrong answer: failed items count in coverage, not in accuracy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.report import compute_metrics, render_report
from factdebate.bench.judging.stats import metric_intervals
from factdebate.cli import app
from tests.bench.test_runner import make_data

LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


def row(i: int, pred: str | None, *kinds: str, stop: str = "single_answer") -> dict[str, Any]:
    """A result row of gold SUPPORTS predicting ``pred``, with errors of ``kinds``."""
    return {
        "id": str(i),
        "gold": "SUPPORTS",
        "prediction": pred,
        "stop_reason": stop,
        "rounds": 1,
        "errors": [{"kind": kind} for kind in kinds],
        "cost": {"total": {"llm_calls": 2, "input_tokens": 10, "output_tokens": 5}},
        "latency_s": 1.0,
    }


def test_failed_items_count_in_coverage_and_cost_not_in_accuracy() -> None:
    rows = [
        row(0, "SUPPORTS"),
        row(1, "REFUTES"),
        row(2, None, "rate_limited"),  # its only call got no answer: failed
        row(3, None, "timeout", stop="model_failure"),
        row(4, None, "parse_error"),  # a reply came but was unreadable: wrong, not failed
    ]
    m = compute_metrics(rows, LABELS)
    assert (m["n"], m["answered"], m["failed"]) == (5, 3, 2)
    assert m["coverage"] == pytest.approx(3 / 5)
    assert m["accuracy"] == pytest.approx(1 / 3)  # over the answered items
    assert m["unparsed"] == 1
    assert sum(m["confusion"]["SUPPORTS"].values()) == 3
    assert m["cost"]["llm_calls"] == 10  # the failed items' calls were paid: in the cost
    intervals = metric_intervals(rows, "labels", LABELS)
    assert (intervals["accuracy"]["n"], intervals["llm_calls_per_item"]["n"]) == (3, 5)
    report = render_report(m, {"method": "cot", "dataset": "x"})
    assert "Coverage 60.0%: 3 of 5 items answered; the scores are over those 3." in report
    assert "2 failed" in report and "not a wrong answer" in report


def test_every_item_failed_scores_nothing_and_says_so() -> None:
    m = compute_metrics([row(0, None, "model_error"), row(1, None, "model_error")], LABELS)
    assert (m["answered"], m["coverage"], m["accuracy"]) == (0, 0.0, 0.0)
    assert "Coverage 0.0%: 0 of 2 items answered" in render_report(
        m, {"method": "m", "dataset": "d"}
    )


def test_answer_runs_score_over_answered_items() -> None:
    from factdebate.bench.judging.report import compute_answer_metrics

    def answer_row(i: int, answers: list[str] | None, *kinds: str) -> dict[str, Any]:
        return {**row(i, None, *kinds), "gold": ["Paris"], "prediction": answers}

    rows = [answer_row(0, ["Paris"]), answer_row(1, None, "model_error")]
    m = compute_answer_metrics(rows)
    assert (m["exact_match"], m["answered"], m["coverage"], m["unanswered"]) == (1.0, 1, 0.5, 1)


def test_bench_with_failed_items_exits_3_naming_the_command_that_retries_them(
    tmp_path: Path, data_home: Path, scripted: Any
) -> None:
    data = make_data(tmp_path / "data", "SSS")
    name, _ = scripted([("Claim number 1", RuntimeError("provider down"))], default="**SUPPORTS**")
    args = ["bench", "--method", "cot", "--dataset", "fever-mini", "--data-dir", str(data)]
    args += ["--model", name, "--set", "model_retries=0", "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("1 of 3 items failed") and "retry them with: factdebate" in last
    assert "Coverage 66.7%: 2 of 3 items answered" in result.output


def test_progress_names_429s_retries_and_failures_as_they_happen() -> None:
    from factdebate.cli.progress import fault_counts
    from factdebate.tools.models import pacing

    pacing.count(rate_limited=1)  # before the run: not this run's
    faults = fault_counts()
    assert faults() == ""
    pacing.count(rate_limited=3, retried=2)
    assert faults() == "3 429s · 2 retried"
    pacing.count(failed_calls=1, hangs_cut=1)
    assert faults() == "3 429s · 2 retried · 1 failed calls · 1 hangs cut"


def test_paired_tests_pair_only_items_both_runs_answered() -> None:
    from factdebate.bench.judging.stats import paired_test

    a = [row(0, "SUPPORTS"), row(1, "SUPPORTS"), row(2, None, "rate_limited")]
    b = [row(0, "REFUTES"), row(1, "SUPPORTS"), row(2, "REFUTES")]
    tested = paired_test(a, b, "labels")
    assert (tested["n"], tested["items_a"], tested["items_b"]) == (2, 3, 3)
    assert (tested["a"], tested["b"], tested["only_a"], tested["only_b"]) == (1.0, 0.5, 1, 0)
