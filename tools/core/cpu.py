"""Threads for CPU inference (llama.cpp, torch): a setting, else the cores idle right now."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Collection

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
    cpus = len(usable_cpus())
    try:
        import psutil

        busy_share = float(psutil.cpu_percent(interval=SAMPLE_S)) / 100.0
        total = int(psutil.cpu_count() or cpus)
        idle = min(cpus, total * (1.0 - busy_share))
    except (ImportError, OSError, RuntimeError):
        idle = cpus - os.getloadavg()[0] if hasattr(os, "getloadavg") else cpus
    return max(1, min(cpus, round(idle)))


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity), at least one."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0)) or [0]
    return list(range(max(1, os.cpu_count() or 1)))


FREE_SLACK = 0.3
"""Share of a core others may keep busy on a core still counted free (background noise)."""
RESAMPLE_S = 0.5
"""Shortest window over which ``FreeCores`` measures what other processes use."""


def threads_for(cpus: int, others_busy: float) -> int:
    """Threads for ``cpus`` usable CPUs when other processes keep ``others_busy`` cores busy.

    Rounded down: one thread more than there are free cores costs far more than one fewer
    (llama.cpp's threads spin at every layer's barrier waiting for one descheduled peer).
    """
    return max(1, min(cpus, math.floor(cpus - max(0.0, others_busy) + FREE_SLACK)))


def busy_seconds(cpus: Collection[int]) -> float:
    """CPU seconds every process together has spent on ``cpus`` since boot (idle excluded)."""
    import psutil

    per_cpu = psutil.cpu_times(percpu=True)
    total = 0.0
    for index in cpus:
        if index < len(per_cpu):
            t = per_cpu[index]
            total += t.user + t.nice + t.system + t.irq + t.softirq + getattr(t, "steal", 0.0)
    return total


def own_seconds() -> float:
    """CPU seconds this process has spent, every thread included."""
    t = os.times()
    return t.user + t.system


class FreeCores:
    """How many of this process's CPUs other processes leave free, kept current and cheap.

    Each ``count()`` at least ``RESAMPLE_S`` after the previous sample compares the CPU time
    all processes spent on this process's CPUs with this process's own CPU time over the
    window in between (two reads of ``/proc/stat``, no wait), so this process's own work
    never counts against it; in between it returns the last answer. Before the first full
    window the 1-minute load average (which counts this process too) stands in.
    """

    def __init__(
        self,
        cpus: Collection[int] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        busy: Callable[[Collection[int]], float] = busy_seconds,
        own: Callable[[], float] = own_seconds,
        load: Callable[[], float] | None = None,
    ) -> None:
        self.cpus = list(cpus) if cpus is not None else usable_cpus()
        self._clock, self._busy, self._own = clock, busy, own
        try:
            load_1m = load() if load is not None else os.getloadavg()[0]
        except OSError:
            load_1m = 0.0
        self.threads = threads_for(len(self.cpus), load_1m)
        self._mark = self._sample()

    def _sample(self) -> tuple[float, float, float] | None:
        try:
            return self._clock(), self._busy(self.cpus), self._own()
        except (ImportError, OSError, RuntimeError):  # no psutil or no /proc: keep the guess
            return None

    def count(self) -> int:
        """Threads to run now: the free cores of the last window (at least 1)."""
        if self._mark is None:
            return self.threads
        now = self._clock()
        if now - self._mark[0] < RESAMPLE_S:
            return self.threads
        sample = self._sample()
        if sample is None:
            return self.threads
        wall = sample[0] - self._mark[0]
        others = (sample[1] - self._mark[1]) - (sample[2] - self._mark[2])
        self.threads = threads_for(len(self.cpus), others / wall)
        self._mark = sample
        return self.threads


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
