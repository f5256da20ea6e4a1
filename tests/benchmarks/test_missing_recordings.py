"""A replay script whose recorded data is absent says so in one line, with no traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import replay_gate, run_main
from tests import capable


def test_a_replay_without_its_recordings_exits_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    absent = {name: tmp_path / f"{name}.jsonl" for name in capable.DEBATE_RECORDINGS}
    monkeypatch.setattr(capable, "DEBATE_RECORDINGS", absent)
    monkeypatch.setattr(sys, "argv", ["benchmarks/replay_gate.py"])
    with pytest.raises(SystemExit) as stopped:
        run_main(replay_gate.main)
    message = str(stopped.value.code)
    assert message.startswith("cannot run benchmarks/replay_gate.py: recorded debates not found")
    assert str(tmp_path) in message and "\n" not in message
