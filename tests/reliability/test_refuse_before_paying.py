"""A run refused for a reason that needs no model sends nothing to the provider first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from factdebate.cli import app
from factdebate.runs.folder import rows_lock
from tests.conftest import REPO
from tests.fake_provider import fake_provider
from tests.reliability.bench_cli import bench_args, fever_mini, one_line_error, runner

HOLD_THREAD = """
import asyncio, sys
from factdebate.runs.checkpoints import open_checkpointer, thread_lease

async def hold(spec, thread):
    async with open_checkpointer(spec) as saver, thread_lease(saver, spec, thread):
        print("holding", flush=True)
        await asyncio.sleep(120)

asyncio.run(hold(sys.argv[1], sys.argv[2]))
"""


def verify_args(model: str, db: Path) -> list[str]:
    claim = "The sky is blue."
    return ["verify", claim, "--method", "cot", "--model", model, "--thread", "t-1"] + [
        "--checkpoint",
        f"sqlite:{db}",
    ]


@pytest.mark.usefixtures("data_home")
def test_a_thread_run_by_another_process_is_refused_without_a_probe(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THREAD, f"sqlite:{db}", "t-1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
            result = runner.invoke(app, verify_args(provider.model(), db))
        one_line_error(result, "is being run by another process")
        assert provider.requests == []  # not even the reachability probe
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.usefixtures("data_home")
def test_a_finished_thread_is_shown_again_without_a_call(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        first = runner.invoke(app, verify_args(provider.model(), db))
        assert first.exit_code == 0, first.output
        calls = len(provider.requests)
        assert calls == 2  # the probe, then the one CoT call
        again = runner.invoke(app, verify_args(provider.model(), db))
    assert again.exit_code == 0, again.output
    assert "already finished; stored result" in again.output
    assert len(provider.requests) == calls


@pytest.mark.usefixtures("data_home")
def test_a_bench_folder_another_bench_writes_is_refused_without_a_probe(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    data = fever_mini(tmp_path / "data")
    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        with rows_lock(out / "results.jsonl", wait=False):  # as a running bench holds it
            refused = runner.invoke(app, bench_args(out, data, provider.model()))
        one_line_error(refused, "is being written by another process")
        assert provider.requests == []
        done = runner.invoke(app, bench_args(out, data, provider.model()))  # once it is free
    assert done.exit_code == 0, done.output
    assert len(provider.requests) == 4


@pytest.mark.usefixtures("data_home")
def test_a_folder_holding_another_run_is_refused_without_a_probe(tmp_path: Path) -> None:
    out = tmp_path / "run"
    data = fever_mini(tmp_path / "data")
    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        first = runner.invoke(app, bench_args(out, data, provider.model()))
        assert first.exit_code == 0, first.output
        calls = len(provider.requests)
        other = runner.invoke(app, bench_args(out, data, provider.model(), "--seed", "7"))
    one_line_error(other, "holds a run with different seed")
    assert len(provider.requests) == calls  # refused before the reachability probe
