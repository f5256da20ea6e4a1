"""The busy-machine benchmark stops the hogs it starts and reports both runs and the ratio."""

from __future__ import annotations

from typing import Any

from benchmarks.busy_machine import hogs, render


def test_hogs_run_inside_the_block_and_are_gone_after():
    with hogs(2) as started:
        assert len(started) == 2 and all(p.poll() is None for p in started)
    assert all(p.returncode is not None for p in started)


def run(wall: float, debate: list[Any]) -> dict[str, Any]:
    return {
        "wall_s": wall,
        "load_1m_min": 0.5,
        "load_1m_mean": 1.0,
        "load_1m_max": 1.5,
        "verdict": "SUPPORTS",
        "llm_calls": 14,
        "output_tokens": 1034,
        "debate": debate,
    }


def test_the_report_gives_both_times_the_ratio_and_whether_the_debate_held():
    text = render(run(100.0, [("a", "x")]), run(250.0, [("a", "x")]), 2)
    assert "| idle | 100.0 |" in text and "| 2 busy loops at nice 0 | 250.0 |" in text
    assert "busy / idle: 2.50; the same debate (answers and scores): yes" in text
    assert "debate (answers and scores): no" in render(run(1.0, [1]), run(1.0, [2]), 2)
