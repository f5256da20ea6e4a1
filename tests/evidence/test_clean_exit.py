"""`factdebate evidence show` ends cleanly every time: 50 runs, each exit 0 (or 2 when refused).

A reader that leaves an Arrow thread pool or a half-read Parquet iterator alive aborts at
interpreter exit (``terminate called without an active exception``, exit 134) after printing
the right answer; the evidence reader reads single-threaded, without read-ahead, and closes
each file, so no native thread outlives it. Runs go four at a time (the command is short).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

from factdebate.evidence import export_snapshot
from factdebate.evidence.store import CALLS
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.evidence.test_damaged_evidence import rewrite_table
from tests.evidence.test_snapshots import log_run

RUNS = 50


def show(path: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "factdebate.cli", "evidence", "show", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=COMMAND_GUARD_S,
    )
    return done.returncode, done.stderr


def test_evidence_show_exits_cleanly_fifty_times(tmp_path: Path) -> None:
    good = tmp_path / "good.evidence"
    export_snapshot([log_run(tmp_path / "run")], good)
    damaged = log_run(tmp_path / "damaged")
    rewrite_table(damaged / "evidence" / CALLS, "k", pa.array(["three", "three"]))
    paths = [good if n % 2 == 0 else damaged for n in range(RUNS)]
    with ThreadPoolExecutor(4) as pool:
        ends = list(pool.map(show, paths))
    for path, (code, errors) in zip(paths, ends, strict=True):
        assert "terminate called" not in errors, errors
        assert code == (0 if path == good else 2), (code, errors)
