"""Record a pace trace: the same `factdebate verify` on the embedded model, run several times.

Run: ``python -m benchmarks.pace_trace --out trace.json`` (minutes: one model load, then each
run). Every run goes through the CLI in this process with one data home, so each run's
announced time comes from the pace model the runs before it left. The trace keeps, per run,
the line the CLI announced, its wall time, and every answered model call (role, tokens, start
and end, seconds from the run's start): ``tests/cli/test_pace_replay.py`` replays it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

CLAIM = "The Eiffel Tower is located in Paris."
ARGS = ["--rounds", "1", "--set", "max_output_tokens=128", "--set", "relevance_strictness=1"]


def record(runs: int, method: str) -> dict[str, Any]:
    """Run ``verify`` ``runs`` times in one fresh data home; the calls and times of each."""
    from factdebate.cli import app
    from factdebate.cli import progress as progress_module

    home = tempfile.mkdtemp(prefix="pace-trace-")
    os.environ["FACTDEBATE_HOME"] = home
    os.environ["FACTDEBATE_MODEL"] = "local"
    calls: list[list[Any]] = []
    original = progress_module.CallMeter.on_timed_call

    def keep(meter: Any, call: Any) -> None:
        calls.append([call.role, call.input_tokens, call.output_tokens, call.started, call.ended])
        original(meter, call)

    progress_module.CallMeter.on_timed_call = keep  # type: ignore[method-assign,assignment]
    trace: list[dict[str, Any]] = []
    for _ in range(runs):
        calls.clear()
        said = io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stderr(said), contextlib.suppress(SystemExit):
            app(["verify", CLAIM, "--method", method, "--json", *ARGS], standalone_mode=False)
        wall = time.monotonic() - started
        lines = [x for x in said.getvalue().splitlines() if x.startswith("expected")]
        trace.append(
            {
                "announced": lines[0] if lines else None,
                "wall_s": round(wall, 3),
                "calls": [
                    [r, i, o, round(s - started, 3), round(e - started, 3)]
                    for r, i, o, s, e in calls
                ],  # fmt: skip
            }
        )
        print(f"run {len(trace)}: {wall:.1f} s, {len(calls)} calls; {trace[-1]['announced']}")
    return {"method": method, "claim": CLAIM, "args": ARGS, "load": os.getloadavg(), "runs": trace}


def main() -> None:
    """Record and write the trace."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--method", default="tool-mad")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    trace = record(args.runs, args.method)
    args.out.write_text(json.dumps(trace, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
