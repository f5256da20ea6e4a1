"""Durable runs: a sqlite checkpoint survives a SIGKILL and resumes; a bad one is refused."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from factdebate.api import averify, open_checkpointer
from tests.bounded import COMMAND_GUARD_S, communicate_bounded
from tests.conftest import REPO
from tests.nodes.baselines.test_graph import CLAIM, mad_rules
from tests.reliability.child_cli import one_line_exit

# A child process: a slow scripted MAD debate (judge says CONTINUE until the last round),
# every model call appended to a marker file, then the real CLI entry point.
CHILD = r"""
import sys, time
from pathlib import Path
from tests.fakes import ScriptedChatModel
from factdebate.tools.models.providers import register_model

marker, delay, claim, db = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]

def slow(text):
    def answer(prompt):
        kind = ("judge" if "You judge" in prompt else
                "affirmative" if "AFFIRMATIVE side" in prompt else "negative")
        debate = prompt.split("Debate so far:", 1)[-1]
        rounds_seen = debate.count(", negative:")
        with marker.open("a") as fh:
            fh.write(f"{kind} after_rounds={rounds_seen}\n")
        time.sleep(delay)
        return text(prompt) if callable(text) else text
    return answer

judge = lambda p: "Refuted.\n**REFUTES**" if "last round" in p else "Unclear.\nCONTINUE"
rules = [("You judge a fact-checking debate between", slow(judge)),
         ("AFFIRMATIVE side", slow("The tower is in Paris.")),
         ("NEGATIVE side", slow("Perhaps a replica."))]
register_model("durable-fake", ScriptedChatModel(rules=rules))
sys.argv = ["factdebate", "verify", claim, "--method", "mad", "--model", "durable-fake",
            "--rounds", "3", "--thread", "t-1", "--checkpoint", "sqlite:" + db, "--json"]
from factdebate.cli import main
main()
"""


def child(marker: Path, db: Path, delay: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), str(delay), CLAIM, str(db)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stored_state(db: Path) -> dict[str, Any]:
    """The latest checkpointed state of thread t-1 read straight from the database."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            row = conn.execute(
                "SELECT type, checkpoint FROM checkpoints WHERE thread_id = 't-1' "
                "ORDER BY checkpoint_id DESC LIMIT 1"
            ).fetchone()
    except sqlite3.Error:
        return {}
    if row is None:
        return {}
    checkpoint = JsonPlusSerializer().loads_typed((row[0], row[1]))
    return dict(checkpoint.get("channel_values", {}))


def round_one_done(db: Path) -> bool:
    state = stored_state(db)
    return state.get("decision") == "continue" and state.get("round") == 1


def test_sigkill_after_round_one_then_resume_does_not_recompute(tmp_path: Path) -> None:
    marker, db = tmp_path / "calls.log", tmp_path / "ckpt" / "runs.db"
    first = child(marker, db, delay=0.4)
    deadline = time.monotonic() + COMMAND_GUARD_S
    while not round_one_done(db):
        assert first.poll() is None, f"child ended early: {first.communicate()}"
        assert time.monotonic() < deadline, "round 1 never reached the checkpoint"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert first.returncode == -signal.SIGKILL
    killed_calls = marker.read_text().splitlines()
    assert killed_calls[:3] == [
        "affirmative after_rounds=0",
        "negative after_rounds=0",
        "judge after_rounds=1",
    ]

    second = child(marker, db, delay=0.0)
    stdout, stderr = communicate_bounded(second, what="the resumed run", guard_s=COMMAND_GUARD_S)
    assert second.returncode == 0, stderr
    assert "resuming" in stderr
    result = json.loads(stdout)
    resumed_calls = marker.read_text().splitlines()[len(killed_calls) :]
    # nothing of round 1 was asked again
    assert all("after_rounds=0" not in c for c in resumed_calls)
    assert "judge after_rounds=1" not in resumed_calls
    assert result["stop_reason"] == "round_limit" and result["verdict"] == "REFUTES"
    assert [(t["round"], t["agent"]) for t in result["transcript"]] == [
        (r, side) for r in (1, 2, 3) for side in ("affirmative", "negative")
    ]
    # 9 calls in all: whatever the killed run finished is not paid for again
    assert len(killed_calls) + len(resumed_calls) - 9 <= 1  # at most the call cut by the kill

    third = child(marker, db, delay=0.0)
    stdout3, stderr3 = communicate_bounded(third, what="the third run", guard_s=COMMAND_GUARD_S)
    assert third.returncode == 0, stderr3
    assert "already finished" in stderr3
    assert json.loads(stdout3)["transcript"] == result["transcript"]
    assert len(marker.read_text().splitlines()) == len(killed_calls) + len(resumed_calls)


async def test_api_thread_round_trip_and_guards(scripted, tmp_path: Path) -> None:
    name, model = scripted(mad_rules("Affirmative is right.\n**SUPPORTS**"))
    spec = f"sqlite:{tmp_path / 'c.db'}"
    first = await averify(CLAIM, "mad", model=name, checkpoint=spec, thread="a")
    calls = len(model.prompts)
    again = await averify(CLAIM, "mad", model=name, checkpoint=spec, thread="a")
    assert again["verdict"] == first["verdict"] == "SUPPORTS"
    assert again["transcript"] == first["transcript"] and len(model.prompts) == calls
    from factdebate.nodes.claims import InputError

    with pytest.raises(InputError, match="different claim"):
        await averify("Another claim entirely.", "mad", model=name, checkpoint=spec, thread="a")
    with pytest.raises(ValueError, match="together"):
        await averify(CLAIM, "mad", model=name, thread="a")
    with pytest.raises(ValueError, match="sqlite:PATH"):
        open_checkpointer("mysql://x")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is a folder, not a SQLite file"),
        (b"these are not the pages of a database\n" * 20, "is not a SQLite database"),
        (b"SQLite format 3\x00" + b"\xff" * 2000, "checkpoint sqlite:"),
    ],
    ids=["folder", "not-sqlite", "damaged-sqlite"],
)
def test_a_bad_checkpoint_file_gives_a_one_line_error(content, message, tmp_path: Path, scripted):
    from typer.testing import CliRunner

    from factdebate.cli import app

    target = tmp_path / "checkpoints.db"
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    name, _ = scripted([])
    args = ["verify", "The sky is blue.", "--method", "cot", "--model", name]
    args += ["--thread", "t1", "--checkpoint", f"sqlite:{target}"]
    result = CliRunner().invoke(app, args)
    one_line_exit(result.exit_code, result.output, message)
