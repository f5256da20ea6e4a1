"""The tests' hang guards: a command past its guard fails naming what ran, how long, its output."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.bounded import communicate_bounded, run_bounded, wait_until

SLOW = [sys.executable, "-c", "import time; print('step one', flush=True); time.sleep(60)"]


def test_a_command_past_its_guard_fails_with_what_ran_and_its_output() -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        run_bounded(SLOW, what="the sleeper", guard_s=2, capture_output=True, text=True)
    message = str(failed.value)
    assert message.startswith("the sleeper was still running after 2 s")
    assert "time.sleep(60)" in message and "step one" in message


def test_a_command_within_its_guard_returns_its_result() -> None:
    done = run_bounded([sys.executable, "-c", "print(7)"], what="a print", capture_output=True)
    assert done.returncode == 0 and done.stdout.strip() == b"7"


def test_a_started_process_past_its_guard_is_killed() -> None:
    proc = subprocess.Popen(SLOW, stdout=subprocess.PIPE, text=True)
    with pytest.raises(pytest.fail.Exception, match="the sleeper was still running"):
        communicate_bounded(proc, what="the sleeper", guard_s=2)
    assert proc.returncode is not None  # killed, not left running


def test_a_wait_that_never_comes_true_fails_naming_it() -> None:
    with pytest.raises(pytest.fail.Exception, match="the flag was still running"):
        wait_until(lambda: None, what="the flag", guard_s=0.2)
    assert wait_until(lambda: 5, what="five") == 5
