"""Help screens at 80 columns keep every option and method name whole."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from factdebate.graphs.registry import METHODS
from tests.bounded import run_bounded

CLI = Path(sys.executable).parent / "factdebate"


@pytest.mark.parametrize("command", ["bench", "verify"])
def test_no_name_is_cut_at_80_columns(command: str) -> None:
    if not CLI.exists():
        pytest.skip("the factdebate command is not installed (pip install -e .)")
    env = {**os.environ, "COLUMNS": "80", "TERMINAL_WIDTH": "80"}
    shown = run_bounded(
        [str(CLI), command, "--help"],
        what=f"{command} --help",
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    assert shown and "…" not in shown
    assert max(len(line) for line in shown.splitlines()) <= 80
    words = shown.replace("│", " ").replace(",", " ").split()
    for name in ("--langsmith-experiment", "--estimate-any-source", "--no-pages"):
        if command == "bench":
            assert name in words, name
    if command == "bench":
        assert all(name in words or f"{name}." in words for name in METHODS), shown
