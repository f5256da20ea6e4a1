"""Record a pace trace: the same `factdebate verify` on the embedded model, run several times.

Run: ``python -m benchmarks.pace_trace --out trace.json`` (minutes). Each run is a fresh
process (as a user's commands are: no prefix cache carried over) on one data home, so each
run's announced time comes from the pace model the runs before it left. The trace keeps, per run,
the line the CLI announced, its wall time, and every answered model call (role, tokens, start
and end, seconds from the run's start): ``tests/cli/test_pace_replay.py`` replays it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLAIM = "The Eiffel Tower is located in Paris."
ARGS = ["--rounds", "1", "--set", "max_output_tokens=128", "--set", "relevance_strictness=1"]


def one_run(method: str) -> dict[str, Any]:
    """One ``verify`` through the CLI in this process: its announcement, wall time and calls."""
    from factdebate.cli import app
    from factdebate.cli import progress as progress_module

    calls: list[list[Any]] = []
    original = progress_module.CallMeter.on_timed_call

    def keep(meter: Any, call: Any) -> None:
        calls.append([call.role, call.input_tokens, call.output_tokens, call.started, call.ended])
        original(meter, call)

    progress_module.CallMeter.on_timed_call = keep  # type: ignore[method-assign,assignment]
    said, shown = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with (
        contextlib.redirect_stderr(said),
        contextlib.redirect_stdout(shown),
        contextlib.suppress(SystemExit),
    ):
        app(["verify", CLAIM, "--method", method, "--json", *ARGS], standalone_mode=False)
    wall = time.monotonic() - started
    lines = [x for x in said.getvalue().splitlines() if x.startswith("expected")]
    return {
        "announced": lines[0] if lines else None,
        "wall_s": round(wall, 3),
        "calls": [
            [r, i, o, round(s - started, 3), round(e - started, 3)] for r, i, o, s, e in calls
        ],  # fmt: skip
    }


def record(runs: int, method: str) -> dict[str, Any]:
    """Run ``verify`` ``runs`` times, each in a fresh process, on one fresh data home."""
    home = tempfile.mkdtemp(prefix="pace-trace-")
    env = {**os.environ, "FACTDEBATE_HOME": home, "FACTDEBATE_MODEL": "local"}
    trace: list[dict[str, Any]] = []
    loads: list[float] = []
    for _ in range(runs):
        out = Path(home) / "run.json"
        subprocess.run(
            [sys.executable, "-m", "benchmarks.pace_trace", "--child", str(out)]
            + ["--method", method],
            env=env,
            check=True,
        )
        trace.append(json.loads(out.read_text(encoding="utf-8")))
        loads.append(os.getloadavg()[0])
        print(f"run {len(trace)}: {trace[-1]['wall_s']:.1f} s, {len(trace[-1]['calls'])} calls; "
              f"{trace[-1]['announced']}", flush=True)  # fmt: skip
    return {"method": method, "claim": CLAIM, "args": ARGS, "load_1min": loads, "runs": trace}


def main() -> None:
    """Record and write the trace."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--method", default="tool-mad")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", type=Path, help="run once here and write the run to CHILD")
    args = parser.parse_args()
    if args.child is not None:
        args.child.write_text(json.dumps(one_run(args.method)), encoding="utf-8")
        return
    if args.out is None:
        parser.error("--out is required")
    trace = record(args.runs, args.method)
    args.out.write_text(json.dumps(trace, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
