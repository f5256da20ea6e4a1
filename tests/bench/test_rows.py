"""A finished run read back for analysis: every item's whole result contract, per item and turn."""

from __future__ import annotations

import json
from pathlib import Path

from factdebate.api import CONTRACT_KEYS, verify
from factdebate.bench import load_run, load_turns, run_frame, turn_frame
from tests.bench.test_runner import bench, make_data


def test_results_round_trip_the_whole_result_contract(tmp_path: Path, scripted) -> None:
    data = make_data(tmp_path / "data", "SRN")
    name, _ = scripted([], default="The documents agree.\n**SUPPORTS**")
    context = {"model": name, "current_date": "2026-11-27"}
    bench(tmp_path, data, name, concurrency=1, context=context)
    rows = sorted(load_run(tmp_path / "run"), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == ["0", "1", "2"]  # the sample's order in the file
    assert [r["correct"] for r in rows] == [1.0, 0.0, 0.0]
    assert {r["method"] for r in rows} == {"cot"} and {r["run"] for r in rows} == {"run"}
    for row in rows:
        result = row["result"]
        assert set(CONTRACT_KEYS) <= set(result)
        assert result["verdict"] == row["prediction"] == "SUPPORTS"
        assert result["cost"] == row["cost"]
        assert result["transcript"][0]["reasoning"] == "The documents agree."
        assert result["decided_by"]["agent"] == "cot"
        # the same claim through the public API gives the same contract, key for key
        same = verify(row["claim"], "cot", **context)
        assert json.loads(json.dumps(same, default=str)) == result


def test_turn_rows_carry_their_items_outcome(tmp_path: Path, scripted) -> None:
    data = make_data(tmp_path / "data", "SR", long_claim_at=1)
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    bench(tmp_path, data, name, concurrency=1, context={"model": name, "max_claim_chars": 80})
    rows = {r["id"]: r for r in load_run(tmp_path / "run")}
    assert rows["1"]["result"] is None and rows["1"]["stop_reason"] == "error"
    turns = load_turns(tmp_path / "run")
    assert len(turns) == 1  # the failed item has no transcript
    assert turns[0]["id"] == "0" and turns[0]["gold"] == "SUPPORTS" and turns[0]["correct"] == 1.0
    assert turns[0]["label"] == "SUPPORTS" and turns[0]["turn"]["answer"].endswith("**SUPPORTS**")
    frame = run_frame([tmp_path / "run", tmp_path / "run"])
    assert len(frame) == 4 and frame["correct"].sum() == 2.0
    assert list(turn_frame(tmp_path / "run")["label"]) == ["SUPPORTS"]
