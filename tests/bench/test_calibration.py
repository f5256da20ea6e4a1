"""Gate calibration on synthetic bench runs whose right and wrong score distributions are known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.calibration import (
    CalibrationError,
    calibrate,
    propose_threshold,
    read_runs,
)
from factdebate.cli import app

runner = CliRunner()
# Lowest relevance of each agreement. Right: 10 values; keep 0.9 allows one below the threshold,
# so the rule gives the second lowest, 0.60. Wrong: 3 of 4 fall below 0.60.
RIGHT_RELEVANCE = [0.55, 0.60, 0.62, 0.70, 0.75, 0.80, 0.85, 0.90, 0.92, 0.95]
WRONG_RELEVANCE = [0.30, 0.50, 0.58, 0.65]


def turn(round_no: int, agent: str, label: str, faithfulness: float, relevance: float) -> Any:
    return {
        "round": round_no,
        "agent": agent,
        "tool": "rag" if agent == "debater_a" else "search",
        "label": label,
        "faithfulness": faithfulness,
        "answer_relevance": relevance,
        "relevance_encoder": "all-MiniLM-L6-v2",
    }


def item(ident: str, gold: str, label: str, relevance: float, faithfulness: float = 1.0) -> Any:
    """An item whose debaters agreed on ``label`` in all 3 rounds; the judge decided it."""
    transcript = [
        turn(r, agent, label, faithfulness, relevance + (0.05 if agent == "debater_b" else 0))
        for r in (1, 2, 3)
        for agent in ("debater_a", "debater_b")
    ]
    result = {
        "verdict": label,
        "stop_reason": "round_limit",
        "rounds": 3,
        "transcript": transcript,
        "cost": {"total": {"llm_calls": 43}, "judge": {"llm_calls": 1}},
    }
    return {"id": ident, "gold": gold, "prediction": label, "result": result}


def write_run(folder: Path, rows: list[Any]) -> Path:
    folder.mkdir(parents=True)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (folder / "results.jsonl").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    rows = [item(f"r{i}", "REFUTES", "REFUTES", v) for i, v in enumerate(RIGHT_RELEVANCE)]
    rows += [item(f"w{i}", "SUPPORTS", "REFUTES", v) for i, v in enumerate(WRONG_RELEVANCE)]
    rows.append({"id": "failed", "gold": "SUPPORTS", "prediction": None, "result": None})
    return write_run(tmp_path / "run", rows)


def test_rule_takes_the_largest_threshold_keeping_the_share() -> None:
    p = propose_threshold(RIGHT_RELEVANCE, WRONG_RELEVANCE, keep=0.9, metric="relevance")
    assert p.threshold == pytest.approx(0.60)
    assert p.kept == pytest.approx(0.9) and p.rejected == pytest.approx(0.75)
    assert not p.capped
    assert propose_threshold(RIGHT_RELEVANCE, [], keep=1.0).threshold == pytest.approx(0.55)
    assert propose_threshold(RIGHT_RELEVANCE, [], keep=0.5).threshold == pytest.approx(0.80)
    capped = propose_threshold(RIGHT_RELEVANCE, [], keep=0.5, ceiling=0.7)
    assert capped.threshold == pytest.approx(0.7) and capped.capped
    with pytest.raises(CalibrationError):
        propose_threshold([], WRONG_RELEVANCE)


def test_calibrate_reads_agreements_and_measures_the_effect(synthetic: Path) -> None:
    found = calibrate([synthetic], keep=0.9, ceilings=(1.0, 1.0))
    assert len(found.runs) == 14  # the failed item has no result
    relevance = found.proposals["relevance"]
    # Each item agreed in 3 rounds: the distribution is the one above, three times over.
    assert (relevance.right, relevance.wrong) == (30, 12)
    assert relevance.threshold == pytest.approx(0.60) and relevance.rejected == pytest.approx(0.75)
    assert found.proposals["faithfulness"].threshold == pytest.approx(1.0)
    proposed = next(e for e in found.effects if e.name == "proposed")
    # 9 of the 10 right items now pass in round 1 with 14 calls (43 less the judge, spread over
    # 3 rounds); the one at 0.55 still runs 3 rounds and the judge (43 calls).
    assert proposed.by_gold["REFUTES"] == pytest.approx((10, 1.2, 16.9))
    assert proposed.by_gold["SUPPORTS"] == pytest.approx((4, 2.5, 35.75))
    assert proposed.accuracy == pytest.approx(10 / 14)  # the wrong labels stay wrong
    paper = next(e for e in found.effects if e.name == "paper")
    assert paper.rounds == pytest.approx((5 * 1 + 9 * 3) / 14)  # 0.80 and up: 5 right, no wrong


def test_default_ceilings_keep_the_paper_as_the_upper_bound(synthetic: Path) -> None:
    found = calibrate([synthetic], keep=0.3)  # the data alone would give 0.90
    assert found.proposals["relevance"].threshold == pytest.approx(0.8)
    assert found.proposals["relevance"].capped
    assert found.proposals["faithfulness"].threshold == pytest.approx(0.7)


def test_noncommittal_zero_relevance_is_left_out(tmp_path: Path) -> None:
    rows = [item("n", "NOT ENOUGH INFO", "NOT ENOUGH INFO", 0.0)]
    rows.append(item("r", "REFUTES", "REFUTES", 0.7))
    rows[0]["result"]["transcript"] = [
        {**t, "answer_relevance": 0.0} for t in rows[0]["result"]["transcript"]
    ]
    found = calibrate([write_run(tmp_path / "run", rows)], ceilings=(1.0, 1.0))
    assert found.proposals["relevance"].left_out == 3
    assert found.proposals["relevance"].threshold == pytest.approx(0.7)


def test_cli_writes_plot_and_table_and_prints_the_proposal(synthetic: Path) -> None:
    out = synthetic / "cal"
    result = runner.invoke(
        app, ["calibrate-gate", str(synthetic), "--out", str(out), "--keep", "0.9"]
    )
    assert result.exit_code == 0, result.output
    assert "| relevance | 0.60 |" in result.output
    assert "| faithfulness | 0.70 |" in result.output  # the paper's value is the ceiling
    assert "GateProfile(name='calibrated'" in result.output
    assert (out / "calibration.png").read_bytes().startswith(b"\x89PNG")
    assert "| 0.55-0.60 |" in (out / "calibration.md").read_text()


def test_cli_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["calibrate-gate", str(empty)])
    assert result.exit_code == 2 and "no results.jsonl" in result.output
    verdict = {"verdict": "SUPPORTS"}
    other = write_run(tmp_path / "other", [{"id": "1", "gold": "SUPPORTS", "result": verdict}])
    result = runner.invoke(app, ["calibrate-gate", str(other)])
    assert result.exit_code == 2 and "no item with Tool-MAD scores" in result.output
    synthetic = write_run(tmp_path / "s", [item("r", "REFUTES", "REFUTES", 0.7)])
    result = runner.invoke(app, ["calibrate-gate", str(synthetic), "--keep", "1.5"])
    assert result.exit_code == 2 and "keep must be within" in result.output
    with pytest.raises(CalibrationError):
        read_runs([empty])


def test_runs_scored_by_different_encoders_are_refused(tmp_path: Path) -> None:
    mixed = item("e5", "REFUTES", "REFUTES", 0.9)
    for t in mixed["result"]["transcript"]:
        t["relevance_encoder"] = "intfloat/e5-small-v2"
    first = write_run(tmp_path / "a", [item("m", "REFUTES", "REFUTES", 0.7)])
    second = write_run(tmp_path / "b", [mixed])
    with pytest.raises(CalibrationError, match="different encoders"):
        calibrate([first, second])
    assert calibrate([second], ceilings=(1.0, 1.0)).encoders == ["intfloat/e5-small-v2"]
