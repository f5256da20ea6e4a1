"""A fresh clone's CI run (install, then ``make test``) beside busy loops: outcome, wall, loads.

Run: ``python -m benchmarks.suite_under_hogs [--commit REV] [--hogs 2] [--out DIR]``. It clones
this repository (nothing beside the clone, a home of its own), starts ``--hogs`` busy-loop
processes at nice 0 (``benchmarks.busy_machine.hogs``), runs ``CI=true bash .ci/run`` (the
venv, llama.cpp's compile, then the README's test command) with the 1-minute load sampled
every 30 s, and stops the loops after it. ``DIR`` keeps the run's log (``ci.log``) and the
load samples (``load.txt``; without ``--out`` they stay beside the clone, in a temporary
folder, else the clone is removed); printed: the exit status, the wall time, the pytest summary line
and the loads seen. About 1.5 hours on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.busy_machine import hogs

REPO = Path(__file__).resolve().parents[1]
LOAD_EVERY_S = 30.0
GUARD_S = 4 * 3600
"""A hang guard far above the run (about 1.5 hours beside two busy loops on 2 cores)."""


def _sample(stop: threading.Event, log: Path) -> None:
    with log.open("a", encoding="utf-8") as out:
        while not stop.wait(LOAD_EVERY_S):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            out.write(f"{stamp} {os.getloadavg()[0]:.2f}\n")
            out.flush()


def main(argv: list[str] | None = None) -> int:
    """Clone, run CI beside the hogs, print the outcome; the exit status is the run's."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commit", default="HEAD", help="the revision to clone (default HEAD)")
    parser.add_argument("--hogs", type=int, default=2, help="busy-loop processes (nice 0)")
    parser.add_argument("--out", type=Path, default=None, help="folder for ci.log and load.txt")
    args = parser.parse_args(argv)
    if not 1 <= args.hogs <= 64:
        parser.error("need 1 <= --hogs <= 64")
    work = Path(tempfile.mkdtemp(prefix="factdebate-hogs-"))
    out = args.out or work / "out"
    out.mkdir(parents=True, exist_ok=True)
    clone, home = work / "clone", work / "home"
    home.mkdir()
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=600)
    subprocess.run(["git", "checkout", "-q", args.commit], cwd=clone, check=True, timeout=60)
    env = {**os.environ, "HOME": str(home), "CI": "true"}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(stop, out / "load.txt"), daemon=True)
    with hogs(args.hogs), (out / "ci.log").open("wb") as log:
        sampler.start()
        t0 = time.perf_counter()
        try:
            done = subprocess.run(
                ["bash", ".ci/run"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                timeout=GUARD_S, check=False,
            )  # fmt: skip
        finally:
            stop.set()
            sampler.join()
        wall = time.perf_counter() - t0
    if args.out is not None:  # the log and loads are kept in --out: the clone can go
        shutil.rmtree(work, ignore_errors=True)
    loads = [float(line.split()[1]) for line in (out / "load.txt").read_text().splitlines()]
    tail = (out / "ci.log").read_bytes()[-20_000:].decode(errors="replace").splitlines()
    summary = next((line for line in reversed(tail) if " in " in line and "=" in line), "")
    print(f"exit {done.returncode}, wall {wall / 60:.1f} min, {args.hogs} busy loops at nice 0")
    print(f"pytest: {summary.strip('= ')}")
    if loads:
        print(f"1-min load: {min(loads):.1f} / {statistics.mean(loads):.1f} / {max(loads):.1f}")
    print(f"log: {out / 'ci.log'}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
