"""Review on a live `langgraph dev`: LangChain's human-in-the-loop format, and a bench run's queue.

One server for the module (tests/langgraph_server.py) serves Tool-MAD on the scripted model of
tests/server_graph.py, behind the project's ``http.app`` (which refuses a decision that does
not fit with a 422 before any run exists).
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain.agents.middleware.human_in_the_loop import HITLRequest, HITLResponse
from pydantic import TypeAdapter
from typer.testing import CliRunner

from factdebate.bench import arun_bench, read_results
from factdebate.cli import app
from factdebate.review.server_queue import QUEUE_DATASET, QUEUE_ITEM, QUEUE_RUN
from tests.bench.test_runner import make_data
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

with warnings.catch_warnings():  # the Agent Inbox's schema, kept in langgraph for old code
    warnings.simplefilter("ignore")
    from langgraph.prebuilt.interrupt import HumanInterrupt

pytestmark = pytest.mark.service

SETTINGS = {"model": "scripted-server", "review": True}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanggraphDev]:
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(tmp_path_factory.mktemp("review-dev"), {"tool-mad": graph})
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


async def paused_thread(client: Any) -> tuple[str, dict[str, Any]]:
    """A new Tool-MAD thread paused for review, and the interrupt value it waits on."""
    thread = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(thread, "tool-mad", input={"claim": CLAIM}, context=SETTINGS)
    assert out.get("__interrupt__"), out
    return thread, await waiting_on(client, thread)


async def waiting_on(client: Any, thread: str) -> dict[str, Any]:
    state = await client.threads.get_state(thread)
    assert state["next"] == ["human_review"], state["next"]
    (task,) = [t for t in state["tasks"] if t["interrupts"]]
    value: dict[str, Any] = task["interrupts"][0]["value"]
    return value


async def test_the_interrupt_is_langchains_request_and_a_bad_decision_changes_nothing(
    server: LanggraphDev,
):
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    thread, request = await paused_thread(client)
    hitl = TypeAdapter(HITLRequest).validate_python(request)  # LangChain's own declaration
    assert set(HITLRequest.__required_keys__) <= set(request)
    TypeAdapter(HumanInterrupt).validate_python(request)  # the Agent Inbox's older one
    (action,) = hitl["action_requests"]
    assert action["name"] == "tool-mad" == hitl["review_configs"][0]["action_name"]
    assert action["args"]["verdict"] == "SUPPORTS" and action["args"]["justification"]
    assert set(hitl["review_configs"][0]["allowed_decisions"]) == {
        "approve",
        "edit",
        "reject",
        "respond",
    }
    for part in (
        CLAIM,
        "SUPPORTS",
        "consensus",
        "Eiffel Tower (fake)",
        "**Cost:**",
        r"debater\_a: SUPPORTS",
    ):
        assert part in action["description"], (part, action["description"])
    bad = [
        ({"decisions": [{"type": "reject"}]}, "without a verdict"),
        ({"decisions": [{"type": "approve"}, {"type": "approve"}]}, "exactly one decision"),
        ([{"type": "ignore", "args": None}], "ignore does not decide"),
        (
            {
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {"name": "tool-mad", "args": {"verdict": "MAYBE"}},
                    }
                ]
            },
            "unknown verdict",
        ),
    ]
    for resume, why in bad:
        answer = httpx.post(
            f"{server.url}/threads/{thread}/runs/wait",
            json={"assistant_id": "tool-mad", "command": {"resume": resume}},
            timeout=COMMAND_GUARD_S,
        )
        assert answer.status_code == 422 and why in answer.text, (resume, answer.text)
        assert await waiting_on(client, thread) == request  # same request, still waiting
    resolved = httpx.post(  # the Agent Inbox's "Mark as Resolved": no decision, refused
        f"{server.url}/threads/{thread}/state",
        json={"values": None, "as_node": "__end__"},
        timeout=COMMAND_GUARD_S,
    )
    assert resolved.status_code == 422 and "without a decision" in resolved.text
    assert await waiting_on(client, thread) == request
    approve = {"decisions": [{"type": "approve"}]}
    TypeAdapter(HITLResponse).validate_python(approve)
    done = await client.runs.wait(thread, "tool-mad", command={"resume": approve})
    assert done["verdict"] == "SUPPORTS" and done["review"]["status"] == "approved"


EDIT = {"type": "edit", "edited_action": {"name": "tool-mad", "args": {
    "verdict": "REFUTES", "note": "a replica"}}}  # fmt: skip
OUTCOMES = [
    ({"decisions": [EDIT]}, "REFUTES", "overruled", "a replica"),
    ({"decisions": [{"type": "reject", "message": "NOT ENOUGH INFO: no date"}]},
     "NOT ENOUGH INFO", "overruled", "no date"),
    ({"decisions": [{"type": "respond", "message": "refutes"}]}, "REFUTES", "overruled", ""),
    ([{"type": "accept", "args": None}], "SUPPORTS", "approved", ""),  # the Agent Inbox's own
    ({"decisions": [{"type": "reject", "args": "REFUTES: seen"}]}, "REFUTES", "overruled", "seen"),
]  # fmt: skip


@pytest.mark.parametrize(("resume", "verdict", "status", "note"), OUTCOMES)
async def test_each_decision_kind_on_a_fresh_thread(
    server: LanggraphDev, resume: Any, verdict: str, status: str, note: str
):
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    thread, _ = await paused_thread(client)
    if isinstance(resume, dict) and "args" not in json.dumps(resume):
        TypeAdapter(HITLResponse).validate_python(resume)
    done = await client.runs.wait(thread, "tool-mad", command={"resume": resume})
    assert (done["verdict"], done["review"]["status"], done["review"]["note"]) == (
        verdict,
        status,
        note,
    )
    assert (done["decided_by"]["agent"] == "reviewer") == (status == "overruled")


async def test_a_bench_queue_on_the_server_is_listed_and_decided_once(
    server: LanggraphDev, tmp_path: Path
):
    from langgraph_sdk import get_client

    data = make_data(tmp_path / "data", "SRN")
    out = tmp_path / "run"
    await arun_bench(
        "tool-mad",
        "fever-mini",
        out,
        data_dir=data,
        server_url=server.url,
        context={**SETTINGS, "max_rounds": 1},
        pages=False,
    )
    rows = read_results(out / "results.jsonl")
    assert {r["review"]["status"] for r in rows} == {"pending"}
    assert {r["result"]["verdict"] for r in rows} == {None}  # proposals, not verdicts
    assert json.loads((out / "metrics.json").read_text())["review"]["awaiting"] == 3
    run_id = rows[0]["review"]["run"]
    client = get_client(url=server.url)
    listed = await client.threads.search(
        metadata={QUEUE_RUN: run_id}, status="interrupted", limit=10
    )
    by_item = {t["metadata"][QUEUE_ITEM]: t for t in listed}
    assert sorted(by_item) == ["0", "1", "2"]
    assert {t["metadata"][QUEUE_DATASET] for t in listed} == {"fever-mini"}
    first = by_item["0"]["thread_id"]
    approve = {"decisions": [{"type": "approve"}]}
    await client.runs.wait(first, "tool-mad", command={"resume": approve})  # from the SDK
    shown = await asyncio.to_thread(
        CliRunner().invoke,
        app,
        ["review", "--server", server.url, "--run", run_id],
        input="o\nREFUTES\nwrong\na\n\n",
    )
    assert shown.exit_code == 0, shown.output
    assert "2 of 2 reviewed" in shown.output and "REFUTES (overruled)" in shown.output
    assert "\n0 (" not in shown.output  # the item decided from the SDK is no longer listed
    again = await asyncio.to_thread(
        CliRunner().invoke, app, ["review", "--server", server.url, "--run", run_id]
    )
    assert again.exit_code == 0 and "nothing awaits review" in again.output
    twice = httpx.post(
        f"{server.url}/threads/{first}/runs/wait",
        json={"assistant_id": "tool-mad", "command": {"resume": approve}},
        timeout=COMMAND_GUARD_S,
    )
    assert twice.status_code == 409 and "already decided" in twice.text
    verdicts = {}
    for item, thread in by_item.items():
        state = await client.threads.get_state(thread["thread_id"])
        verdicts[item] = (state["values"]["verdict"], state["values"]["review"]["status"])
        runs = await client.runs.list(thread["thread_id"])
        assert len(runs) == 2, (item, runs)  # the run that paused, and one decision
    synced = await asyncio.to_thread(CliRunner().invoke, app, ["review", str(out)])
    assert synced.exit_code == 0 and "3 decision(s) taken on the server" in synced.output
    reviewed = {str(r["id"]): r for r in read_results(out / "results.jsonl")}
    assert reviewed["1"]["prediction"] == "REFUTES"
    assert reviewed["1"]["review"]["status"] == "overruled"
    assert reviewed["1"]["review"]["note"] == "wrong"
    result = reviewed["1"]["result"]  # the row's whole result is the decided one
    assert result["verdict"] == "REFUTES" and result["review"]["status"] == "overruled"
    assert result["decided_by"]["agent"] == "reviewer"
    assert not any(r["review"]["status"] == "pending" for r in reviewed.values())
    assert "review" not in json.loads((out / "metrics.json").read_text())  # all decided
    proposed = {str(r["id"]): r["review"]["proposed"] for r in rows}
    assert verdicts == {
        "0": (proposed["0"], "approved"),
        "1": ("REFUTES", "overruled"),
        "2": (proposed["2"], "approved"),
    }


async def test_a_paused_thread_shows_no_verdict_and_a_threadless_review_is_refused(
    server: LanggraphDev,
):
    from langgraph_sdk import get_client

    from factdebate.nodes.review import NEEDS_THREAD

    client = get_client(url=server.url)
    thread, request = await paused_thread(client)
    values = (await client.threads.get_state(thread))["values"]
    assert values["verdict"] is None and values["proposed_verdict"] == request["proposed"]
    assert values["review"] == {"status": "pending", "proposed": request["proposed"]}
    run = {"assistant_id": "tool-mad", "input": {"claim": CLAIM}, "context": SETTINGS}
    refused = [
        httpx.post(f"{server.url}{path}", json=body, timeout=COMMAND_GUARD_S)
        for path, body in [
            ("/runs/wait", run),
            ("/runs/stream", run),
            ("/runs", run),
            ("/runs/batch", [run]),
            ("/runs/wait", {**run, "context": None, "config": {"configurable": SETTINGS}}),
        ]
    ]
    for answer in refused:
        assert answer.status_code == 422 and answer.json()["detail"] == NEEDS_THREAD, answer.text
    bench_like = await client.assistants.create("tool-mad", context=SETTINGS)  # review built in
    answer = httpx.post(
        f"{server.url}/runs/wait",
        json={"assistant_id": bench_like["assistant_id"], "input": {"claim": CLAIM}},
        timeout=COMMAND_GUARD_S,
    )
    assert answer.status_code == 422 and answer.json()["detail"] == NEEDS_THREAD
    tool_call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "tool-mad", "arguments": {"claim": CLAIM}, "context": SETTINGS},
    }
    mcp = httpx.post(
        f"{server.url}/mcp",
        json=tool_call,
        headers={"accept": "application/json, text/event-stream"},
        timeout=COMMAND_GUARD_S,
    )
    assert mcp.status_code == 422 and NEEDS_THREAD in mcp.text
    off = httpx.post(  # review off: the same run goes on without a thread
        f"{server.url}/runs/wait",
        json={**run, "context": {**SETTINGS, "review": False}},
        timeout=COMMAND_GUARD_S,
    )
    assert off.status_code == 200 and off.json()["verdict"] == "SUPPORTS", off.text
