"""The demo claim on the embedded model, idle and beside a CPU hog: both times and their ratio.

Run: ``python -m benchmarks.busy_machine`` (``make bench-busy``). Each run is a fresh
``factdebate verify "The Eiffel Tower is located in Paris." --json`` process (the ``make demo``
claim; the default collection is built first when missing, untimed). The busy run starts
``--hogs`` busy-loop processes at nice 0 before the claim and stops them after it. Printed per
run: wall time, the load averages seen while it ran (sampled every few seconds), the verdict
and model calls; then the ratio, and whether both runs wrote the same debate (llama.cpp's
answers do not depend on its thread count, so the load should not change them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CLAIM = "The Eiffel Tower is located in Paris."
HOG = "while True:\n    pass\n"
ENSURE_INDEX = (
    "from factdebate.tools.retrieval.corpus import DEFAULT_COLLECTION\n"
    "from factdebate.tools.retrieval.index import ensure_index\n"
    "ensure_index(DEFAULT_COLLECTION)\n"
)
LOAD_EVERY_S = 2.0
GUARD_S = 7200
"""A hang guard far above any claim (the slowest measured busy run took about 30 minutes)."""


@contextmanager
def hogs(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` busy-loop processes at nice 0 for the block, then stopped by their PID."""
    started = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(count)]
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def _loads(stop: threading.Event, seen: list[float]) -> None:
    while not stop.wait(LOAD_EVERY_S):
        seen.append(os.getloadavg()[0])


def claim_run(extra: list[str]) -> dict[str, Any]:
    """One demo-claim process: wall seconds, loads seen, verdict, calls and its transcript."""
    seen = [os.getloadavg()[0]]
    stop = threading.Event()
    sampler = threading.Thread(target=_loads, args=(stop, seen), daemon=True)
    command = [sys.executable, "-m", "factdebate.cli", "verify", CLAIM, "--json", *extra]
    t0 = time.perf_counter()
    sampler.start()
    try:
        done = subprocess.run(command, capture_output=True, timeout=GUARD_S, check=False)
    finally:
        stop.set()
        sampler.join()
    wall = time.perf_counter() - t0
    seen.append(os.getloadavg()[0])
    if done.returncode != 0:
        raise RuntimeError(f"verify exited {done.returncode}: {done.stderr.decode()[-1000:]}")
    result = json.loads(done.stdout)
    total = result.get("cost", {}).get("total", {})
    return {
        "wall_s": round(wall, 1),
        "load_1m_min": min(seen),
        "load_1m_mean": round(statistics.mean(seen), 2),
        "load_1m_max": max(seen),
        "verdict": result.get("verdict"),
        "llm_calls": total.get("llm_calls", 0),
        "output_tokens": total.get("output_tokens", 0),
        "debate": [
            (t.get("agent"), t.get("answer"), t.get("faithfulness"), t.get("answer_relevance"))
            for t in result.get("transcript", [])
        ],
    }


def render(idle: dict[str, Any], busy: dict[str, Any], hog_count: int) -> str:
    """Both runs and the ratio as a markdown table."""
    lines = [
        "| run | wall s | 1-min load seen (min / mean / max) | verdict | calls | output tokens |",
        "|---|---:|---|---|---:|---:|",
    ]
    for name, run in (("idle", idle), (f"{hog_count} busy loops at nice 0", busy)):
        load = f"{run['load_1m_min']:.1f} / {run['load_1m_mean']:.1f} / {run['load_1m_max']:.1f}"
        lines.append(
            f"| {name} | {run['wall_s']:.1f} | {load} | {run['verdict']} | {run['llm_calls']} | "
            f"{run['output_tokens']} |"
        )
    ratio = busy["wall_s"] / idle["wall_s"]
    same = "yes" if idle["debate"] == busy["debate"] else "no"
    lines += ["", f"busy / idle: {ratio:.2f}; the same debate (answers and scores): {same}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the claim idle, then beside the hogs; print both, the ratio and the JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hogs", type=int, default=2, help="busy-loop processes (nice 0)")
    parser.add_argument("--rounds", type=int, default=0, help="debate rounds (0: the default)")
    parser.add_argument("--json", action="store_true", help="also print both runs as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.hogs <= 64 or not 0 <= args.rounds <= 10:
        parser.error("need 1 <= --hogs <= 64 and 0 <= --rounds <= 10")
    extra = ["--rounds", str(args.rounds)] if args.rounds else []
    subprocess.run([sys.executable, "-c", ENSURE_INDEX], check=True, timeout=GUARD_S)
    idle = claim_run(extra)
    print(f"idle: {idle['wall_s']:.1f} s", flush=True)
    with hogs(args.hogs):
        time.sleep(LOAD_EVERY_S)  # the hogs are running before the claim starts
        busy = claim_run(extra)
    print(render(idle, busy, args.hogs))
    if args.json:
        print(json.dumps({"idle": idle, "busy": busy}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
