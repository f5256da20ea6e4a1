"""The bench review queue: every item waits for a person, decisions rescore without a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def review_bench(tmp: Path, scripted: Any) -> tuple[Path, Any]:
    """A finished `bench --review` run of two claims (S, R), both waiting: its folder and model."""
    from tests.bench.test_runner import bench, make_data

    data = make_data(tmp / "data", "SR")
    name, model = scripted([], default="Yes.\n**SUPPORTS**")
    bench(tmp, data, name, context={"model": name, "review": True})
    return tmp / "run", model


def test_bench_review_queue(tmp_path: Path, scripted) -> None:
    import json

    from factdebate.bench import read_results
    from factdebate.bench.running.review_queue import apply_decision, pending_items

    run, model = review_bench(tmp_path, scripted)
    rows = read_results(run / "results.jsonl")
    assert [r["review"]["status"] for r in rows] == ["pending", "pending"]
    assert all(r["prediction"] is None for r in rows)  # no verdict until a person decides
    assert all(r["review"]["proposed"] == "SUPPORTS" for r in rows)  # the proposal
    waiting = pending_items(run)
    assert [r["id"] for r, _ in waiting] == [r["id"] for r in rows]
    assert waiting[0][1]["verdict"] == "SUPPORTS" and waiting[0][1]["choices"]
    calls = len(model.prompts)
    by_gold = {r["gold"]: str(r["id"]) for r in rows}  # rows are in finishing order
    first, second = by_gold["SUPPORTS"], by_gold["REFUTES"]
    apply_decision(run, first, {"approve": True})
    with pytest.raises(ValueError, match="unknown verdict"):
        apply_decision(run, second, {"verdict": "MAYBE"})
    apply_decision(run, second, {"verdict": "REFUTES", "note": "checked"})
    assert len(model.prompts) == calls  # deciding runs no model
    rows = sorted(read_results(run / "results.jsonl"), key=lambda r: r["gold"], reverse=True)
    assert [r["review"]["status"] for r in rows] == ["approved", "overruled"]
    assert [r["prediction"] for r in rows] == ["SUPPORTS", "REFUTES"]
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["accuracy"] == pytest.approx(1.0)  # both reviewed verdicts match gold
    assert pending_items(run) == []
    with pytest.raises(ValueError, match="not awaiting review"):
        apply_decision(run, first, {"approve": True})
