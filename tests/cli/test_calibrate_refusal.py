"""calibrate-gate on a run of a method without Tool-MAD's stability gate: one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from factdebate.cli import app


def run_folder(root: Path, method: str) -> Path:
    folder = root / method
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"method": method, "dataset": "fever-mini"}))
    (folder / "results.jsonl").write_text("")
    return folder


def test_a_cot_run_is_refused_in_one_line(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["calibrate-gate", str(run_folder(tmp_path, "cot"))])
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        f"error: {tmp_path / 'cot'} is a run of cot, which has no stability gate: calibrate-gate "
        "reads the debaters' scores of Tool-MAD runs (tool-mad and its ablations)"
    ]
    assert not (tmp_path / "cot" / "calibration").exists()


def test_a_tool_mad_run_is_read(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["calibrate-gate", str(run_folder(tmp_path, "tool-mad"))], env={"COLUMNS": "300"}
    )
    assert "no stability gate" not in done.output  # it goes on to read the (empty) rows
