"""How long the `factdebate` command takes to refuse a typo, and what a run costs to start.

Run: ``python -m benchmarks.cli_refusal`` (``make bench-cli``). Each case runs the installed
command in a fresh process ``--repeat`` times; the table gives the median wall time and the
median CPU time (user + system) of the child. CPU time is what the refusal itself costs;
wall time also shows how busy the machine was. The last row is for comparison: the same
command with valid settings, stopped by a model name that does not exist, which is refused
only after the heavy stack (LangGraph, LangChain, the method's graph) has loaded.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES: list[tuple[str, list[str]]] = [
    ("unknown setting", ["verify", "A claim", "--set", "max_roundz=2"]),
    ("bad --rounds", ["verify", "A claim", "--rounds", "0"]),
    ("unknown method", ["verify", "A claim", "--method", "tool-madd"]),
    ("unknown dataset", ["bench", "--dataset", "fevr-mini", "--out", "unused"]),
    ("settings listing", ["settings", "tool-mad"]),
    ("unknown model (after imports)", ["verify", "A claim", "--model", "nonsense:x"]),
]


def command() -> list[str]:
    """The console script next to this interpreter, or ``python -c`` running its entry point."""
    script = Path(sys.executable).with_name("factdebate")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from factdebate.cli import main; main()"]


def measure(args: list[str], repeat: int) -> tuple[float, float, int]:
    """Median wall seconds, median CPU seconds and the exit code of ``factdebate ARGS``."""
    walls, cpus, code = [], [], 0
    env = {**os.environ, "FACTDEBATE_HOME": os.environ.get("FACTDEBATE_HOME", "/tmp/fd-bench")}
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([*command(), *args], env=env, capture_output=True, timeout=600)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        code = proc.returncode
    return statistics.median(walls), statistics.median(cpus), code


def main() -> None:
    """Print a Markdown table of the cases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, choices=range(1, 51), metavar="1..50")
    repeat = parser.parse_args().repeat
    load = os.getloadavg()[0]
    print(f"repeat {repeat}, {os.cpu_count()} CPUs, load average before {load:.2f}\n")
    print("| case | exit | median wall s | median CPU s |")
    print("|---|---|---|---|")
    for name, args in CASES:
        wall, cpu, code = measure(args, repeat)
        print(f"| {name} | {code} | {wall:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
