"""Hang guards for the tests: work bounds the tests, these only stop a run that never ends.

A test that runs a command, waits for a server or polls for a line is bounded by its work (a
round, a token budget, a number of calls). The numbers here are far above that work on any
machine, however loaded: they exist so that a hang fails with what was running, for how long,
and the tail of its output, instead of blocking the suite. No test passes or fails on speed.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest

MODEL_GUARD_S = 3600.0  # a command that runs the embedded model (idle: under a minute)
COMMAND_GUARD_S = 1200.0  # a command with no model work (idle: seconds)
SERVICE_START_S = 900.0  # a local server's start (idle: seconds; 2 busy cores: about a minute)
PROMPT_S = 300.0  # a step that must not sit out a long wait (idle: under a second)
TAIL_CHARS = 3000

T = TypeVar("T")


def _text(value: object) -> str:
    """Captured output as text, whatever form subprocess gave it."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _show(cmd: object) -> str:
    """The command as one line for a failure message."""
    if isinstance(cmd, (list, tuple)):
        return " ".join(str(part) for part in cmd)
    return str(cmd)


def hang_message(what: str, cmd: object, elapsed_s: float, output: str) -> str:
    """What a hang guard says: what ran, the command, how long, and the tail of its output."""
    tail = output[-TAIL_CHARS:] if output else "(no output)"
    return (
        f"{what} was still running after {elapsed_s:.0f} s (a hang guard, far above its work): "
        f"{cmd}\n--- last output ---\n{tail}"
    )


def run_bounded(
    cmd: Sequence[Any] | str, *, what: str, guard_s: float = COMMAND_GUARD_S, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(cmd, **kwargs)``; past ``guard_s`` the test fails naming ``what``."""
    started = time.monotonic()
    try:
        return subprocess.run(cmd, timeout=guard_s, **kwargs)
    except subprocess.TimeoutExpired as exc:
        output = _text(exc.stdout) + _text(exc.stderr)
        pytest.fail(hang_message(what, _show(cmd), time.monotonic() - started, output))


def communicate_bounded(
    proc: subprocess.Popen[Any],
    *,
    what: str,
    guard_s: float = COMMAND_GUARD_S,
    stdin: Any = None,
) -> tuple[Any, Any]:
    """``proc.communicate()``; past ``guard_s`` the process is killed and the test fails."""
    started = time.monotonic()
    try:
        return proc.communicate(stdin, timeout=guard_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        output = _text(out) + _text(err)
        pytest.fail(hang_message(what, _show(proc.args), time.monotonic() - started, output))


def wait_bounded(
    proc: subprocess.Popen[Any], *, what: str, guard_s: float = COMMAND_GUARD_S
) -> int:
    """``proc.wait()``; past ``guard_s`` the process is killed and the test fails."""
    started = time.monotonic()
    try:
        return proc.wait(timeout=guard_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(hang_message(what, _show(proc.args), time.monotonic() - started, ""))


def wait_until(
    check: Callable[[], T | None],
    *,
    what: str,
    guard_s: float = COMMAND_GUARD_S,
    every_s: float = 0.05,
    output: Callable[[], str] = lambda: "",
) -> T:
    """Poll ``check()`` until it returns something truthy; past ``guard_s`` the test fails."""
    started = time.monotonic()
    while True:
        got = check()
        if got:
            return got
        elapsed = time.monotonic() - started
        if elapsed > guard_s:
            pytest.fail(hang_message(what, "(a wait in the test)", elapsed, output()))
        time.sleep(every_s)


def assert_prompt(started: float, what: str, limit_s: float = PROMPT_S) -> None:
    """``what`` ended without sitting out a long wait (``limit_s`` is far above its work)."""
    elapsed = time.monotonic() - started
    assert elapsed < limit_s, f"{what} took {elapsed:.0f} s: it sat out a wait it should skip"
