"""calibrate-escalation: the rule in sample and held out, on synthetic screen_all runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.calibration import CalibrationError
from factdebate.bench.judging.escalation import (
    NEVER,
    choose,
    effect,
    held_out,
    read_screened,
    screened_item,
)
from factdebate.cli import app

SCREEN_CALLS, METHOD_CALLS = 4, 14


def screened_row(
    item: int, labels: list[str | None], gold: str = "SUPPORTS", method: str = "SUPPORTS"
) -> dict[str, Any]:
    """A screen_all row: the screen's labels and spending, the method proper's verdict."""
    readable = [label for label in labels if label is not None]
    top = max(readable, key=readable.count) if readable else None
    agreement = readable.count(top) / len(labels) if top else 0.0
    cost = {"llm_calls": METHOD_CALLS, "input_tokens": 1000, "output_tokens": 100}
    return {
        "id": f"c{item}",
        "gold": gold,
        "prediction": method,
        "stop_reason": "consensus",
        "rounds": 1,
        "cost": {"total": cost},
        "result": {
            "verdict": method,
            "stop_reason": "consensus",
            "cost": {"total": cost},
            "transcript": [],
            "screen": {
                "labels": labels,
                "verdict": top,
                "agreement": round(agreement, 4),
                "share": 1.0,
                "escalated": True,
                "reason": "screen_all",
                "llm_calls": SCREEN_CALLS,
                "tokens": 300,
            },
        },
    }


def overfit_rows() -> list[dict[str, Any]]:
    """50 claims: 40 unanimous and right; 5 at 2 of 3, one of them wrong; 5 split three ways."""
    rows = [screened_row(i, ["SUPPORTS"] * 3) for i in range(40)]
    rows.append(screened_row(40, ["REFUTES", "REFUTES", "SUPPORTS"]))  # the screen is wrong
    rows += [screened_row(i, ["SUPPORTS", "SUPPORTS", "REFUTES"]) for i in range(41, 45)]
    rows += [screened_row(i, ["SUPPORTS", "REFUTES", None]) for i in range(45, 50)]
    return rows


def items_of(rows: list[dict[str, Any]]) -> list[Any]:
    return [item for row in rows if (item := screened_item(row)) is not None]


def test_the_criterion_takes_the_largest_saving_within_one_item_per_50():
    items = items_of(overfit_rows())
    chosen = choose(items)
    assert chosen.share == pytest.approx(0.6667)
    assert chosen.right == 49 == effect(items, NEVER).right - 1
    assert chosen.settled == 45
    assert chosen.calls == pytest.approx((45 * SCREEN_CALLS + 5 * METHOD_CALLS) / 50)


def test_an_overfit_rules_held_out_cost_is_above_its_in_sample_cost():
    items = items_of(overfit_rows())
    in_sample = choose(items)
    found = held_out(items)
    # a fold without the lucky claim cannot afford 2 of 3, so those claims run the debate
    assert found.calls["estimate"] > in_sample.calls
    assert found.calls["estimate"] == pytest.approx((41 * 4 + 9 * 14) / 50)
    assert found.accuracy["estimate"] == pytest.approx(49 / 50)
    assert found.shares == (pytest.approx(0.6667), 1.0)
    assert found.calls["low"] is not None  # a bootstrap interval over claims


def test_a_run_settled_without_screen_all_is_refused_in_one_line():
    row = screened_row(1, ["SUPPORTS"] * 3)
    row["result"]["screen"]["reason"] = "agreed"
    with pytest.raises(CalibrationError, match="screen_all=true"):
        screened_item(row)


def write_run(folder: Path, rows: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"method": "escalate-tool-mad"}) + "\n")
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_calibrate_escalation_prints_in_sample_and_held_out_tables(tmp_path: Path):
    folder = write_run(tmp_path / "run", overfit_rows())
    assert len(read_screened([folder])) == 50
    done = CliRunner().invoke(app, ["calibrate-escalation", str(folder)])
    assert done.exit_code == 0, done.output
    assert "In sample:" in done.output and "Held out (leave one claim out, 50 claims" in done.output
    assert "screen_share=0.6667 (chosen)" in done.output
    assert "98.0%" in done.output


def test_calibrate_escalation_refuses_a_run_without_screens(tmp_path: Path):
    rows = overfit_rows()
    for row in rows:
        del row["result"]["screen"]
    done = CliRunner().invoke(app, ["calibrate-escalation", str(write_run(tmp_path / "r", rows))])
    assert done.exit_code == 2 and "no item with a screen record" in done.output
