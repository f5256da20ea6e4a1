"""The thread count follows the cores other processes leave free (faked clocks and CPU times)."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from factdebate.tools.core import cpu


class Machine:
    """A fake machine: a clock, CPU time all processes spent, and this process's own."""

    def __init__(self) -> None:
        self.now = 100.0
        self.busy = 0.0
        self.own = 0.0
        self.asked: list[list[int]] = []

    def run(self, seconds: float, others: float, own: float) -> None:
        """``seconds`` pass with ``others`` cores busy elsewhere and ``own`` cores here."""
        self.now += seconds
        self.busy += seconds * (others + own)
        self.own += seconds * own

    def cores(self, cpus: Collection[int] = (0, 1), load: float = 0.0) -> cpu.FreeCores:
        def busy(which: Collection[int]) -> float:
            self.asked.append(sorted(which))
            return self.busy

        return cpu.FreeCores(
            cpus, clock=lambda: self.now, busy=busy, own=lambda: self.own, load=lambda: load
        )


@pytest.mark.parametrize(
    ("cpus", "others", "threads"),
    [(2, 0.0, 2), (2, 0.2, 2), (2, 0.5, 1), (2, 1.0, 1), (2, 2.0, 1), (2, 9.0, 1), (8, 3.0, 5)],
)
def test_threads_are_the_free_cores_rounded_down(cpus: int, others: float, threads: int):
    assert cpu.threads_for(cpus, others) == threads


def test_the_count_follows_other_processes_not_this_ones_own_work():
    machine = Machine()
    cores = machine.cores()
    machine.run(1.0, others=0.0, own=2.0)  # this process alone, both cores: still free
    assert cores.count() == 2
    machine.run(1.0, others=1.0, own=1.0)  # another process took a core
    assert cores.count() == 1
    machine.run(1.0, others=2.0, own=0.7)  # two busy loops at nice 0
    assert cores.count() == 1
    machine.run(1.0, others=0.1, own=1.0)  # they stopped
    assert cores.count() == 2


def test_the_count_is_kept_between_samples():
    machine = Machine()
    cores = machine.cores()
    machine.run(1.0, others=0.0, own=0.0)
    assert cores.count() == 2
    machine.run(0.1, others=2.0, own=0.0)  # too short a window: the last answer stands
    assert cores.count() == 2
    machine.run(cpu.RESAMPLE_S, others=2.0, own=0.0)
    assert cores.count() == 1


def test_the_load_average_stands_in_before_the_first_window():
    machine = Machine()
    assert machine.cores(load=0.1).count() == 2
    assert machine.cores(load=1.5).count() == 1


def test_only_this_processs_cpus_are_counted():
    machine = Machine()
    cores = machine.cores(cpus=[3])
    machine.run(1.0, others=0.0, own=0.0)
    assert cores.count() == 1
    assert machine.asked and all(which == [3] for which in machine.asked)


def test_without_cpu_times_the_guess_stays():
    def unavailable(which: Collection[int]) -> float:
        raise OSError("no /proc/stat")

    cores = cpu.FreeCores([0, 1], busy=unavailable, load=lambda: 0.0)
    assert cores.count() == 2
    assert cpu.FreeCores([0, 1], busy=unavailable, load=lambda: 4.0).count() == 1


def test_the_real_machine_gives_a_count_within_its_cpus():
    cores = cpu.FreeCores()
    assert 1 <= cores.count() <= len(cpu.usable_cpus())
    assert cpu.busy_seconds(cpu.usable_cpus()) > 0 and cpu.own_seconds() > 0
