"""`verify` keeps what its tools returned beside the result and replays it with the tools gone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.tools import dispatch
from factdebate.tools.core.records import Evidence
from tests.fakes import ScriptedChatModel, ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."


def rules() -> list[Any]:
    """A Tool-MAD debate that agrees the claim holds (tests/bench_server_graph.py's answers)."""
    return [
        *ragas_rules(faithful=True, relevant_question=CLAIM),
        ("inside square brackets", "[Eiffel Tower]"),
        ("Decide whether the claim holds", "The document places it in Paris.\n**SUPPORTS**"),
    ]


runner = CliRunner()


def evidence_read(result: dict[str, Any]) -> list[list[str]]:
    return [[d["id"] for d in t.get("evidence") or []] for t in result["transcript"]]


def test_verify_logs_its_calls_and_replays_them_without_the_tools(
    tmp_path: Path, fake_tools: dict[str, list[str]]
) -> None:
    from factdebate.tools.models.providers import register_model

    name = register_model("scripted-evidence-verify", ScriptedChatModel(rules=list(rules())))
    args = ["verify", CLAIM, "--method", "tool-mad", "--model", name, "--rounds", "1", "--json"]
    live = runner.invoke(app, [*args, "--evidence-log", str(tmp_path / "log")])
    assert live.exit_code == 0, live.output
    first = json.loads(live.stdout)
    calls = pd.read_parquet(tmp_path / "log" / "evidence" / "calls.parquet")
    assert set(calls["tool"]) == {"rag", "search"} and set(calls["claim"]) == {CLAIM}
    assert len(calls) == len(fake_tools["rag"]) + len(fake_tools["search"])

    def gone(query: str, k: int) -> list[Evidence]:
        raise AssertionError("a replayed run called a tool")

    dispatch.override_tool("rag", gone)
    dispatch.override_tool("search", gone)
    again = runner.invoke(app, [*args, "--evidence-from", str(tmp_path / "log")])
    assert again.exit_code == 0, again.output
    second = json.loads(again.stdout)
    assert evidence_read(second) == evidence_read(first) and any(evidence_read(first))
    assert second["verdict"] == first["verdict"]
    assert not second["errors"]
    shown = runner.invoke(app, [*args[:-1], "--evidence-from", str(tmp_path / "log")])
    assert shown.exit_code == 0 and "evidence replayed from" in shown.output, shown.output


def test_verify_with_a_missing_snapshot_is_one_line(tmp_path: Path, scripted) -> None:
    name, model = scripted([])
    result = runner.invoke(
        app, ["verify", CLAIM, "--model", name, "--evidence-from", str(tmp_path / "none")]
    )
    assert not model.prompts
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "no such file or folder" in lines[0], result.output


async def test_a_checkpointed_run_records_its_log_and_item(
    tmp_path: Path, fake_tools: dict[str, list[str]]
) -> None:
    from factdebate.api import EVIDENCE_KEY, averify
    from factdebate.runs.checkpoints import open_checkpointer, recorded_metadata
    from factdebate.tools.models.providers import register_model

    name = register_model("scripted-evidence-thread", ScriptedChatModel(rules=list(rules())))
    store = f"sqlite:{tmp_path / 'runs.db'}"
    await averify(
        CLAIM,
        "tool-mad",
        checkpoint=store,
        thread="t-1",
        evidence_log=tmp_path / "log",
        model=name,
        max_rounds=1,
    )
    async with open_checkpointer(store) as saver:
        record = await recorded_metadata(saver, "t-1", EVIDENCE_KEY)
    assert json.loads(record) == {"log": str(tmp_path / "log" / "evidence"), "read": {}}
    calls = pd.read_parquet(tmp_path / "log" / "evidence" / "calls.parquet")
    assert set(calls["item"]) == {"t-1"}  # the thread is the item a call was made for
