"""Every paid request in the bill: the call journal keeps the requests of items a kill cut off."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench import read_results
from factdebate.bench.running.call_journal import JOURNAL, unrowed_calls
from factdebate.tools.models.reach import PROBE_MARK
from tests.bench.test_runner import bench, make_data
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.fake_provider import fake_provider


def entry(item: str, attempt: str, outcome: str, **usage: int) -> dict[str, Any]:
    """One journal line of a debater request."""
    return {"item": item, "attempt": attempt, "role": "debater", "outcome": outcome, **usage}


def test_requests_of_tries_without_a_row_are_counted_and_a_torn_line_is_skipped(
    tmp_path: Path,
) -> None:
    path = tmp_path / JOURNAL
    lines = [
        entry("0", "a", "sent"),
        entry("0", "a", "answered", input_tokens=10, output_tokens=4),  # item 0's row holds it
        entry("1", "b", "sent"),
        entry("1", "b", "rejected"),  # a 429, then retried
        entry("1", "b", "sent"),
        entry("1", "b", "answered", input_tokens=7, output_tokens=3),
        entry("1", "b", "sent"),  # in flight when the process was killed
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    path.write_text(text + '{"item": "1", "attempt": "b", "outc')  # a torn last line
    found = unrowed_calls(path, [{"id": "0", "attempt": "a"}])
    assert found is not None
    assert (found["items"], found["tries"], found["requests"]) == (1, 1, 3)
    total = found["cost"]["total"]
    assert (total["llm_calls"], total["rejected"]) == (2, 1)  # the cut request is a call
    assert (total["input_tokens"], total["output_tokens"]) == (7, 3)
    assert found["cost"]["debater"] == total
    assert unrowed_calls(path, [{"id": "0", "attempt": "a"}, {"id": "1", "attempt": "b"}]) is None


CHILD = """
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from factdebate.bench import run_bench

run_bench("cot", "fever-mini", Path({out!r}), data_dir=Path({data!r}), limit=None, seed=0,
          concurrency=4, context={{"model": {model!r}}})
"""


def test_kill_half_way_and_resume_bills_every_request_the_provider_saw(
    tmp_path: Path, data_home: Path
) -> None:
    data = make_data(tmp_path / "data", "SRN" * 8)
    out = tmp_path / "run"
    seen = {"n": 0, "checks": 0}  # requests the provider received; its connection checks
    lock = threading.Lock()

    def answer(prompt: str, body: dict[str, Any]) -> str:
        if PROBE_MARK in prompt:
            with lock:
                seen["checks"] += 1
            return "ok"
        with lock:
            seen["n"] += 1
            n = seen["n"]
        time.sleep(0.3)  # slow enough that the kill finds requests in flight
        if n % 5 == 0:
            raise ConnectionResetError("dropped")  # no answer: the client retries it
        return "The claim holds.\n**SUPPORTS**"

    with fake_provider(answer) as provider:
        script = tmp_path / "child.py"
        source = CHILD.format(repo=str(REPO), out=str(out), data=str(data), model=provider.model())
        script.write_text(textwrap.dedent(source))
        child = subprocess.Popen(
            [sys.executable, str(script)],
            cwd=REPO,
            env={**os.environ},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        results = out / "results.jsonl"
        deadline = time.monotonic() + COMMAND_GUARD_S
        try:
            while time.monotonic() < deadline:
                if results.exists() and len(results.read_text().splitlines()) >= 8:
                    break
                if child.poll() is not None:
                    assert child.stderr is not None
                    pytest.fail(f"child ended early: {child.stderr.read().decode()[-2000:]}")
                time.sleep(0.05)
            else:
                pytest.fail("child wrote no results within the guard")
            child.send_signal(signal.SIGKILL)
            child.wait(60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(60)
        assert 8 <= len(read_results(results)) < 24, "the kill must interrupt the run"
        metrics = bench(tmp_path, data, provider.model(), concurrency=4)
    assert metrics["n"] == 24 and metrics["answered"] == 24
    cost = metrics["cost"]
    outside = metrics["run"]["outside_rows"]
    assert seen["checks"] == 2  # one per invocation: the killed one and the resume
    assert seen["n"] + seen["checks"] == cost["llm_calls"] + cost["rejected"]
    assert outside["connection_checks"] == 2 and outside["cost"]["check"]["llm_calls"] == 2
    assert cost["rejected"] > 0
    assert outside["cut_off_requests"] > 0  # the items in flight at the kill left no row
    report = (out / "report.md").read_text()
    assert f"include {outside['cut_off_requests']} requests sent for" in report
