"""Threads for CPU inference (llama.cpp, torch): a setting, else the cores idle right now."""

from __future__ import annotations

import os

from factdebate.tools.core.env import env_int
from factdebate.tools.core.records import ModelConfigError

MAX_THREADS = 256
SAMPLE_S = 0.25
"""Seconds over which busy cores are sampled."""


def idle_cores() -> int:
    """This process's CPUs minus those other work keeps busy right now, at least 1.

    Inference threads wait for each other at every layer, so one more thread than there are
    free cores stalls the rest: on a busy 2-core machine 2 threads ran llama.cpp ~10x and
    MiniLM ~1.5x slower than 1 thread. Busy cores are sampled over ``SAMPLE_S`` (psutil's
    system-wide CPU time) while this thread waits, so this process's own earlier work does
    not count against it, as it would in the load average (a benchmark that had just run
    at 100% of one core saw 1.0 of load and then loaded llama.cpp with 1 thread on an
    otherwise idle 2-core machine). Falls back to the 1-minute load average.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpus = max(1, cpus or 1)
    try:
        import psutil

        busy_share = float(psutil.cpu_percent(interval=SAMPLE_S)) / 100.0
        total = int(psutil.cpu_count() or cpus)
        idle = min(cpus, total * (1.0 - busy_share))
    except (ImportError, OSError, RuntimeError):
        idle = cpus - os.getloadavg()[0] if hasattr(os, "getloadavg") else cpus
    return max(1, min(cpus, round(idle)))


def threads_setting(env: str) -> int:
    """The thread count in environment variable ``env`` (1..MAX_THREADS), else idle cores."""
    return env_int(env, 0, 1, MAX_THREADS, error=ModelConfigError) or idle_cores()


def cpu_flags() -> frozenset[str]:
    """Instruction-set flags this CPU reports (Linux ``/proc/cpuinfo``; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:  # every core lists the same flags: the first list is enough
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()
