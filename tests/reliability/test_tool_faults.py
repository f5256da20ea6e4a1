"""Tool faults: search down, vector store down or missing, empty results — runs go on, recorded."""

from __future__ import annotations

from typing import Any

from factdebate.graphs.debate_cv import graph as debate_cv
from factdebate.graphs.madam_rag import graph as madam_rag
from factdebate.graphs.tool_mad import graph as tool_mad
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.tools import dispatch
from tests.bounded import COMMAND_GUARD_S, assert_prompt, run_bounded
from tests.nodes.debate_cv.test_graph import rules as cv_rules
from tests.nodes.debate_cv.test_graph import stop_at
from tests.nodes.tool_mad.test_graph import ARGUE_MARK, CLAIM, debate_rules

NO_DOCS = "(no documents were retrieved)"


def down(query: str, k: int) -> list[Any]:
    raise ConnectionError("search backend unreachable")


def empty(query: str, k: int) -> list[Any]:
    return []


async def test_tool_mad_search_down_records_tool_error_and_debates_on(scripted, fake_tools):
    dispatch.override_tool("search", down)
    name, model = scripted(debate_rules())
    out = await tool_mad.ainvoke({"claim": CLAIM}, context=ToolMADContext(model=name, max_rounds=1))
    errors = [e for e in out["errors"] if e["kind"] == "tool_error"]
    assert errors and errors[0]["agent"] == "debater_b"
    assert "search: ConnectionError: search backend unreachable" in errors[0]["message"]
    turn_b = next(t for t in out["transcript"] if t["agent"] == "debater_b")
    assert turn_b["evidence"] == [] and turn_b["label"] == "SUPPORTS"
    assert out["stop_reason"] in ("consensus", "round_limit")


async def test_tool_mad_empty_results_are_not_an_error_and_say_so(scripted, fake_tools):
    dispatch.override_tool("rag", empty)
    dispatch.override_tool("search", empty)
    name, model = scripted(debate_rules())
    out = await tool_mad.ainvoke(
        {"claim": CLAIM}, context=ToolMADContext(model=name, max_rounds=1, stability_score=False)
    )
    assert not [e for e in out["errors"] if e["kind"] in ("tool_error", "timeout")]
    assert all(t["evidence"] == [] for t in out["transcript"])
    argue_prompts = [p for p in model.prompts if ARGUE_MARK in p]
    assert len(argue_prompts) == 2 and all(NO_DOCS in p for p in argue_prompts)


async def test_tool_mad_missing_milvus_collection_is_a_tool_error(scripted, data_home):
    name, _ = scripted(debate_rules())
    out = await tool_mad.ainvoke(
        {"claim": CLAIM},
        context=ToolMADContext(
            model=name,
            max_rounds=1,
            collection="never-built-here",
            tool_a="rag",
            tool_b="none",
            stability_score=False,
            call_timeout_s=60,
        ),
    )
    [error] = [e for e in out["errors"] if e["stage"] == "retrieve"]
    assert error["kind"] == "tool_error" and error["agent"] == "debater_a"
    assert "never-built-here" in error["message"]
    assert out["stop_reason"]


async def test_tool_mad_hanging_tool_is_a_timeout(scripted, fake_tools):
    import time

    def hang(query: str, k: int) -> list[Any]:
        time.sleep(2)
        return []

    dispatch.override_tool("search", hang)
    name, _ = scripted(debate_rules())
    out = await tool_mad.ainvoke(
        {"claim": CLAIM},
        context=ToolMADContext(model=name, max_rounds=1, call_timeout_s=0.3, stability_score=False),
    )
    assert any(e["kind"] == "timeout" and e["stage"] == "retrieve" for e in out["errors"])


async def test_debate_cv_with_retrieval_down_debates_on_no_evidence(scripted, fake_tools):
    dispatch.override_tool("rag", down)
    name, model = scripted(cv_rules(stop_at(1)))
    out = await debate_cv.ainvoke({"claim": CLAIM}, context=DebateCVContext(model=name))
    [error] = [e for e in out["errors"] if e["kind"] == "tool_error"]
    assert error["stage"] == "retrieve" and "unreachable" in error["message"]
    assert out["verdict"] == "SUPPORTS" and out["stop_reason"] == "moderator"
    assert all(NO_DOCS in p for p in model.prompts)


async def test_madam_rag_with_retrieval_down_stops_with_no_documents(scripted, fake_tools):
    dispatch.override_tool("rag", down)
    name, model = scripted([])
    out = await madam_rag.ainvoke(
        {"question": "Where is the Eiffel Tower?"}, context=MadamContext(model=name)
    )
    assert out["stop_reason"] == "no_documents" and out["verdict"] is None
    assert [e["kind"] for e in out["errors"]] == ["tool_error"]
    assert model.prompts == []


async def test_madam_rag_with_empty_retrieval_stops_with_no_documents(scripted, fake_tools):
    dispatch.override_tool("rag", empty)
    name, model = scripted([])
    out = await madam_rag.ainvoke(
        {"question": "Where is the Eiffel Tower?"}, context=MadamContext(model=name)
    )
    assert out["stop_reason"] == "no_documents" and out["errors"] == []
    assert model.prompts == []


def test_milvus_file_held_by_another_process_is_a_one_line_cli_error(tmp_path):
    """A second process on the same Milvus Lite file gets a clear error, not a traceback."""
    import os
    import subprocess
    import sys
    import time

    home = tmp_path / "home"
    home.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pymilvus import MilvusClient\n"
            f"MilvusClient({str(home / 'milvus.db')!r})\n"
            "print('ready', flush=True)\ntime.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        env = {**os.environ, "FACTDEBATE_HOME": str(home)}
        started = time.monotonic()
        proc = run_bounded(
            [sys.executable, "-m", "factdebate.cli", "verify", "A claim", "--collection", "x"],
            env=env,
            capture_output=True,
            text=True,
            what="verify on a held Milvus file",
            guard_s=COMMAND_GUARD_S,
        )
        assert proc.returncode == 2
        assert "another process may be using this Milvus Lite file" in proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
        assert_prompt(started, "verify on a held Milvus file")
    finally:
        holder.kill()
        holder.wait()
