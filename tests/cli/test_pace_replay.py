"""A recorded pace trace replayed: each run's announced time against the time it really took.

``pace_trace.json`` was recorded by ``python -m benchmarks.pace_trace`` on the 2-core project
machine while other jobs ran (its load averages are in the file): the same one-round
``verify`` on the embedded model, run after run, each a fresh process on one data home. The
replay feeds each run's calls (role, tokens, start, end) through the CLI's own meter and
keeps its calls per item, exactly as the command does, then asks for the next run's forecast.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from factdebate.cli.progress import CallMeter, forecast, remember_pace
from factdebate.runs.pace import read_book
from factdebate.tools.models.call_clock import TimedCall

TRACE = Path(__file__).with_name("pace_trace.json")
SETTINGS = {"max_rounds": 1, "max_output_tokens": 128, "relevance_strictness": 1}
"""The trace's ``--rounds 1 --set max_output_tokens=128 --set relevance_strictness=1``."""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def announced_s(line: str | None) -> float | None:
    """Seconds of an ``expected time on local: H:MM:SS`` line (None: no time said)."""
    found = re.search(r"expected time on local: (\d+):(\d\d):(\d\d)", line or "")
    if found is None:
        return None
    h, m, s = (int(g) for g in found.groups())
    return 3600.0 * h + 60.0 * m + s


def replay(trace: dict[str, Any], home: Path) -> list[tuple[float | None, float]]:
    """Each run's announced seconds (before it) and its wall seconds, replayed in order."""
    out: list[tuple[float | None, float]] = []
    for run in trace["runs"]:
        said = announced_s(forecast(trace["method"], "local", 1, SETTINGS))
        out.append((said, float(run["wall_s"])))
        clock = Clock()
        meter = CallMeter(clock, read_book(home))
        meter.model = "local"
        for role, tokens_in, tokens_out, started, ended in sorted(run["calls"], key=lambda c: c[4]):
            meter.on_llm_end(None)
            meter.on_timed_call(TimedCall(role, tokens_in, tokens_out, started, ended))
        clock.now = float(run["wall_s"])
        remember_pace("local", meter, trace["method"], SETTINGS, 1)
    return out


def test_the_replay_learns_the_calls_and_announces_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path))
    trace = json.loads(TRACE.read_text(encoding="utf-8"))
    assert len(trace["runs"]) >= 3 and all(run["calls"] for run in trace["runs"])
    said = replay(trace, tmp_path)
    assert said[0][0] is None  # nothing timed yet: the first run gives no time
    assert all(s is not None for s, _ in said[1:])  # every later run does


def test_the_announced_time_is_within_30_percent_of_the_actual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last run, forecast from the runs before it, against its wall time."""
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path))
    trace = json.loads(TRACE.read_text(encoding="utf-8"))
    said, actual = replay(trace, tmp_path)[-1]
    assert said is not None
    assert abs(said - actual) <= 0.3 * actual, (said, actual)
