"""Durable runs on a real PostgreSQL server: `--checkpoint postgresql://...` survives kills.

One server per module (tests/pg_server.py; skipped with the printed reason where it cannot
start). Model calls go to the fake OpenAI-compatible server (tests/fake_provider.py), which
counts them: a call answered once is never asked again after a resume.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from factdebate.tools.models.providers import register_model
from factdebate.tools.models.reach import PROBE_MARK
from tests.bounded import COMMAND_GUARD_S, communicate_bounded
from tests.conftest import REPO
from tests.fake_provider import fake_provider
from tests.fakes import ScriptedChatModel
from tests.nodes.baselines.test_graph import mad_rules
from tests.nodes.tool_mad.test_graph import ARGUE_MARK, CLAIM, debate_rules
from tests.pg_server import PgServer, postgres_or_skip

pytestmark = pytest.mark.service

# A child process: fixed retrieval (no index, no network), then the real CLI entry point.
CHILD = r"""
import sys
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import override_tool

method, model, claim, thread, checkpoint, rounds = sys.argv[1:7]
for tool in ("rag", "search"):
    override_tool(tool, lambda q, k, t=tool: [Evidence(
        id=f"{t}-1", title="Eiffel Tower", text="The Eiffel Tower is in Paris.",
        source="fake", score=1.0)][:k])
sys.argv = ["factdebate", "verify", claim, "--method", method, "--model", model,
            "--rounds", rounds, "--thread", thread, "--checkpoint", checkpoint, "--json"]
from factdebate.cli import main
main()
"""

ROUND_TWO_QUERY = "You may keep your previous query"  # Tool-MAD's query prompt from round 2


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    yield from postgres_or_skip()


def child(method: str, model: str, claim: str, thread: str, url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, method, model, claim, thread, url, "2"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def statements(prompt: str) -> str:
    """RAGAS statements unique to the answer (so no two scoring prompts coincide)."""
    tag = hashlib.sha256(prompt.encode()).hexdigest()[:10]
    return json.dumps({"statements": [f"The answer states fact {tag}."]})


class Counting:
    """The fake provider's responder: scripted rules, every prompt counted, one kind held.

    Answers to debaters carry the request number, so every prompt of a run is distinct and a
    prompt seen twice means a call was made twice. Prompts for which ``hold(prompt)`` is true
    wait (unanswered) until ``release`` is set: the test acts while the run is stuck there.
    """

    def __init__(self, rules: list[Any], hold: Callable[[str], bool] | None = None) -> None:
        self.rules = [("StatementGeneratorOutput", statements), *rules]
        self.hold = hold
        self.asked: list[str] = []
        self.answered: list[str] = []
        self.times: list[tuple[float, str]] = []
        self.held = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.delay = 0.0

    def __call__(self, prompt: str, body: dict[str, Any]) -> str:
        if PROBE_MARK in prompt:  # the reach check before a run is not one of its calls
            return "OK"
        with self.lock:
            self.asked.append(prompt)
            number = len(self.asked)
        if self.hold is not None and self.hold(prompt) and not self.release.is_set():
            self.held.set()
            self.release.wait(120)
            return "(held call released)"
        time.sleep(self.delay)
        answer: Any = "I cannot tell.\n**NOT ENOUGH INFO**"
        for key, value in self.rules:
            if key(prompt) if callable(key) else key in prompt:
                answer = value(prompt) if callable(value) else value
                break
        if ARGUE_MARK in prompt or "side of a fact-checking debate" in prompt:
            head, sep, tail = str(answer).partition("\n")
            answer = f"{head} (reply {number}){sep}{tail}"
        with self.lock:
            self.answered.append(prompt)
            self.times.append((time.monotonic(), prompt))
        return str(answer)


def one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert lines, "no error message"
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]


def test_tool_mad_killed_after_round_one_resumes_from_postgres(pg: PgServer) -> None:
    url = pg.create_database("killed")
    counting = Counting(debate_rules("SUPPORTS", "REFUTES"), hold=lambda p: ROUND_TWO_QUERY in p)
    with fake_provider(counting) as provider:
        first = child("tool-mad", provider.model(), CLAIM, "t-1", url)
        try:
            assert counting.held.wait(COMMAND_GUARD_S), (
                f"round 2 never started: {first.communicate()}"
            )
            first.send_signal(signal.SIGKILL)  # round 1 is saved; round 2 is waiting on a call
            first.wait(timeout=30)
        finally:
            counting.release.set()
        assert first.returncode == -signal.SIGKILL
        answered_before = list(counting.answered)
        asked_before = len(counting.asked)
        assert sum(ARGUE_MARK in p for p in answered_before) == 2  # both round-1 arguments

        second = child("tool-mad", provider.model(), CLAIM, "t-1", url)
        stdout, stderr = communicate_bounded(
            second, what="the resumed run", guard_s=COMMAND_GUARD_S
        )
    assert second.returncode == 0, stderr
    assert "resuming" in stderr
    result = json.loads(stdout)
    assert result["rounds"] == 2 and result["stop_reason"] == "round_limit"
    assert result["verdict"] in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    # no call answered before the kill was asked again (only the held, unanswered ones)
    asked_after = counting.asked[asked_before:]
    assert not set(asked_after) & set(answered_before)
    assert sum(ROUND_TWO_QUERY in p for p in asked_after) == 2
    # round 1 of the result is the killed process's work (its replies' numbers)
    round_one = [t for t in result["transcript"] if t["round"] == 1]
    assert len(round_one) == 2
    for turn in round_one:
        number = int(turn["answer"].split("(reply ")[1].split(")")[0])
        assert number <= asked_before


def test_two_processes_on_two_threads_share_one_database(pg: PgServer) -> None:
    url = pg.create_database("shared")  # fresh: both processes create the tables at once

    def judge(prompt: str) -> str:
        return "Refuted.\n**REFUTES**" if "last round" in prompt else "Unclear.\nCONTINUE"

    claims = {"t-a": "The Eiffel Tower is located in Paris.", "t-b": "Mount Fuji is in Japan."}
    counting = Counting(mad_rules(judge))
    counting.delay = 0.3
    with fake_provider(counting) as provider:
        procs = {t: child("mad", provider.model(), c, t, url) for t, c in claims.items()}
        outs = {
            t: communicate_bounded(p, what="a run on PostgreSQL", guard_s=COMMAND_GUARD_S)
            for t, p in procs.items()
        }
    for thread, proc in procs.items():
        assert proc.returncode == 0, outs[thread][1]
    results = {t: json.loads(outs[t][0]) for t in claims}
    for thread in claims:
        assert results[thread]["rounds"] == 2 and results[thread]["verdict"] == "REFUTES"
        assert len(results[thread]["transcript"]) == 4
    # the two debates ran side by side: each one's calls overlap the other's in time
    spans = {}
    for thread, claim in claims.items():
        stamps = [t for t, prompt in counting.times if claim in prompt]
        assert len(stamps) == 6  # 2 rounds x (affirmative, negative, judge)
        spans[thread] = (min(stamps), max(stamps))
    (a0, a1), (b0, b1) = spans["t-a"], spans["t-b"]
    assert a0 < b1 and b0 < a1, spans
    # each thread holds its own debate, whole
    stored = asyncio.run(stored_values(url, list(claims)))
    for thread, claim in claims.items():
        assert stored[thread]["claim"] == claim
        answers = [t["answer"] for t in stored[thread]["transcript"]]
        assert answers == [t["answer"] for t in results[thread]["transcript"]]
    assert not any(claims["t-a"] in p and claims["t-b"] in p for p in counting.asked)


async def stored_values(url: str, threads: list[str]) -> dict[str, dict[str, Any]]:
    from factdebate.graphs.registry import load_method
    from factdebate.runs.checkpoints import open_checkpointer

    graph, _ = load_method("mad")
    out = {}
    async with open_checkpointer(url) as saver:
        durable = graph.builder.compile(checkpointer=saver)
        for thread in threads:
            snapshot = await durable.aget_state({"configurable": {"thread_id": thread}})
            assert not snapshot.next, f"{thread} is not finished"
            out[thread] = dict(snapshot.values)
    return out


def test_bad_url_and_refused_password_are_one_line_errors(pg: PgServer) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    runner = CliRunner()
    args = ["verify", CLAIM, "--method", "mad", "--model", "scripted-none", "--thread", "t"]
    bad = runner.invoke(app, [*args, "--checkpoint", "postgresql://u@127.0.0.1/db?nope=1"])
    assert bad.exit_code != 0
    message = one_line_error(bad.stderr)
    assert "invalid URI query parameter" in message and "nope" in message

    model = ScriptedChatModel(rules=mad_rules("Affirmative is right.\n**SUPPORTS**"))
    name = register_model("pg-refused", model)
    wrong = pg.url("postgres", password="not-the-password")
    refused = runner.invoke(
        app,
        [
            "verify",
            CLAIM,
            "--method",
            "mad",
            "--model",
            name,
            "--thread",
            "t",
            "--checkpoint",
            wrong,
        ],
    )
    assert refused.exit_code != 0
    message = one_line_error(refused.stderr)
    assert "password authentication failed" in message
    assert "not-the-password" not in refused.stderr and "127.0.0.1" in message
    assert model.prompts == []  # refused before any model call


def test_database_gone_mid_run_is_one_line_and_loses_no_finished_step(pg: PgServer) -> None:
    url = pg.create_database("gone")

    def judge(prompt: str) -> str:
        return "Refuted.\n**REFUTES**" if "last round" in prompt else "Unclear.\nCONTINUE"

    def round_two(prompt: str) -> bool:
        debate = prompt.split("Debate so far:", 1)[-1]
        return "AFFIRMATIVE side" in prompt and debate.count(", negative:") == 1

    counting = Counting(mad_rules(judge), hold=round_two)
    with fake_provider(counting) as provider:
        first = child("mad", provider.model(), CLAIM, "t-1", url)
        try:
            assert counting.held.wait(COMMAND_GUARD_S), (
                f"round 2 never started: {first.communicate()}"
            )
            pg.stop()  # round 1 is saved; the database goes away while round 2 runs
        finally:
            counting.release.set()
        try:
            _, stderr = communicate_bounded(
                first, what="the run whose database stopped", guard_s=COMMAND_GUARD_S
            )
        finally:
            pg.start()  # back for the rest of the module, whatever happened
        assert first.returncode != 0
        message = one_line_error(stderr)
        assert "checkpoint" in message and "run the same command again" in message
        assert pg.password not in stderr
        answered_before = list(counting.answered)
        asked_before = len(counting.asked)
        assert len(answered_before) == 3  # round 1: affirmative, negative, judge

        second = child("mad", provider.model(), CLAIM, "t-1", url)
        stdout, stderr2 = communicate_bounded(
            second, what="the resumed run", guard_s=COMMAND_GUARD_S
        )
    assert second.returncode == 0, stderr2
    assert "resuming" in stderr2
    result = json.loads(stdout)
    assert result["rounds"] == 2 and result["verdict"] == "REFUTES"
    assert not set(counting.asked[asked_before:]) & set(answered_before)
    assert len(counting.answered) == 6  # each of the 6 calls answered exactly once


def test_bench_checkpoint_keeps_each_items_steps_in_postgres(pg: PgServer, tmp_path, scripted):
    from factdebate.bench import read_results, run_bench
    from tests.bench.test_runner import make_data

    url = pg.create_database("bench")
    name, model = scripted([], default="Known.\n**SUPPORTS**")
    data = make_data(tmp_path / "data", "SRS")
    args: dict[str, Any] = {"data_dir": data, "limit": None, "seed": 0, "concurrency": 2}
    out = tmp_path / "run"
    run_bench("cot", "fever-mini", out, context={"model": name}, checkpoint=url, **args)
    calls = len(model.prompts)
    assert calls == 3
    first = {r["id"]: r["prediction"] for r in read_results(out / "results.jsonl")}
    # the results file is lost: the items' threads still hold their finished debates
    (out / "results.jsonl").unlink()
    run_bench("cot", "fever-mini", out, context={"model": name}, checkpoint=url, **args)
    assert len(model.prompts) == calls
    again = {r["id"]: r["prediction"] for r in read_results(out / "results.jsonl")}
    assert again == first == {"0": "SUPPORTS", "1": "SUPPORTS", "2": "SUPPORTS"}
    # another run folder is another run: its items get threads of their own
    run_bench(
        "cot", "fever-mini", tmp_path / "other", context={"model": name}, checkpoint=url, **args
    )
    assert len(model.prompts) == 2 * calls
    with pytest.raises(ValueError, match="a server keeps its own"):
        run_bench(
            "cot",
            "fever-mini",
            tmp_path / "x",
            context={"model": name},
            checkpoint=url,
            server_url="http://127.0.0.1:9",
            **args,
        )
