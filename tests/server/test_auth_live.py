"""Keys and roles on a live `langgraph dev`: who may decide, read, copy, rewind or forge a review.

One server for the module serves Tool-MAD on the scripted model of tests/server_graph.py with
the project's ``http.app`` and its ``auth`` (as langgraph.json registers it) and a key file
of four principals. Every refused request is checked to have changed nothing: the thread's
state and its checkpoints are compared before and after.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from factdebate.server.keys import issue
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

pytestmark = pytest.mark.service

SETTINGS = {"model": "scripted-server", "review": True}
APPROVE = {"decisions": [{"type": "approve"}]}
PRINCIPALS = {"ops": "operator", "rita": "reviewer", "alice": "client", "bob": "client"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The server's URL and each principal's key."""
    folder = tmp_path_factory.mktemp("auth-dev")
    keyfile = folder / "keys.json"
    keys = {name: issue(keyfile, name, role) for name, role in PRINCIPALS.items()}
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(folder, {"tool-mad": graph}, env={"FACTDEBATE_SERVER_KEYS": str(keyfile)})
    config = json.loads((folder / "langgraph.json").read_text())
    config["auth"] = json.loads((REPO / "langgraph.json").read_text())["auth"]
    (folder / "langgraph.json").write_text(json.dumps(config))
    dev.start()
    try:
        yield dev.url, keys
    finally:
        dev.stop()


def _as(served: tuple[str, dict[str, str]], who: str) -> httpx.Client:
    url, keys = served
    return httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {keys[who]}"}, timeout=COMMAND_GUARD_S
    )


def _paused(client: httpx.Client) -> str:
    """A new thread of ``client``'s, paused at its review."""
    thread = client.post("/threads", json={}).json()["thread_id"]
    out = client.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": "tool-mad", "input": {"claim": CLAIM}, "context": SETTINGS},
    )
    assert out.status_code == 200 and out.json().get("__interrupt__"), out.text[:300]
    return str(thread)


def _stored(ops: httpx.Client, thread: str) -> tuple[Any, Any]:
    """The thread's state and its checkpoints, as the operator reads them."""
    state = ops.get(f"/threads/{thread}/state").json()
    history = ops.post(f"/threads/{thread}/history", json={"limit": 100}).json()
    return state, [h["checkpoint"]["checkpoint_id"] for h in history]


def test_without_a_known_key_nothing_is_served_and_harmful_routes_are_closed(served):
    url, keys = served
    for headers in ({}, {"Authorization": "Bearer fdk_unknown"}, {"X-Api-Key": "nope"}):
        answer = httpx.post(f"{url}/threads/search", json={}, headers=headers, timeout=30)
        assert answer.status_code == 401, answer.text
    ops = _as(served, "ops")
    assert ops.post("/threads/search", json={}).status_code == 200
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    mcp_headers = {"Accept": "application/json, text/event-stream"}
    answer = httpx.post(f"{url}/mcp", json=listing, headers=mcp_headers, timeout=30)
    assert answer.status_code == 401, answer.text  # /mcp starts runs: a key is needed there too
    reviewer = _as(served, "rita").post("/mcp", json=listing, headers=mcp_headers)
    assert reviewer.status_code == 403 and "may not start runs" in reviewer.text
    assert _as(served, "alice").post("/mcp", json=listing, headers=mcp_headers).status_code == 200
    for method, path in (("POST", "/internal/truncate"), ("POST", "/deploy"), ("GET", "/deploy")):
        answer = ops.request(method, path, json={} if method == "POST" else None)
        assert answer.status_code == 403 and "not served here" in answer.text, (path, answer.text)


async def test_the_real_client_library_authenticates_with_its_api_key(served):
    from langgraph_sdk import get_client

    url, keys = served
    client = get_client(url=url, api_key=keys["alice"])
    thread = await client.threads.create(metadata={"owner": "bob"})
    assert thread["metadata"]["owner"] == "alice"  # never the owner the payload names
    found = await client.threads.search(limit=100)
    assert {t["metadata"]["owner"] for t in found} == {"alice"}


def test_a_client_cannot_decide_update_rewind_copy_or_forge_a_review_nor_read_anothers(served):
    alice, bob, ops = _as(served, "alice"), _as(served, "bob"), _as(served, "ops")
    thread = _paused(alice)
    before = _stored(ops, thread)
    paused_at = before[0]["checkpoint"]["checkpoint_id"]
    run = f"/threads/{thread}/runs/wait"
    hostile = {
        "decides": (alice, run, {"assistant_id": "tool-mad", "command": {"resume": APPROVE}}),
        "updates": (alice, run, {"assistant_id": "tool-mad", "command": {"update": {"x": 1}}}),
        "writes state": (alice, f"/threads/{thread}/state", {"values": {"verdict": "REFUTES"}}),
        "new input": (alice, run, {"assistant_id": "tool-mad", "input": {"claim": "Other."}}),
        "rewinds": (
            alice,
            run,
            {"assistant_id": "tool-mad", "checkpoint_id": paused_at, "input": None},
        ),
        "copies": (alice, f"/threads/{thread}/copy", {}),
        "other client decides": (
            bob,
            run,
            {"assistant_id": "tool-mad", "command": {"resume": APPROVE}},
        ),
        "other client runs": (bob, run, {"assistant_id": "tool-mad", "input": {"claim": CLAIM}}),
    }
    for case, (client, path, payload) in hostile.items():
        answer = client.post(path, json=payload)
        assert answer.status_code in (403, 404, 409, 422), (case, answer.status_code, answer.text)
        detail = str(answer.json().get("detail"))
        assert "\n" not in detail, (case, detail)
    forged = alice.post(
        "/threads",
        json={
            "metadata": {"bench_run": "r-1", "bench_item": "0"},
            "supersteps": [
                {"updates": [{"values": {"review": {"status": "approved"}}, "as_node": "judge"}]}
            ],
        },
    )
    assert forged.status_code == 422 and "supersteps" in forged.text
    assert bob.get(f"/threads/{thread}").status_code == 404
    assert bob.get(f"/threads/{thread}/state").status_code == 404
    assert thread not in {t["thread_id"] for t in bob.post("/threads/search", json={}).json()}
    assert bob.delete(f"/threads/{thread}").status_code in (403, 404)
    assert _stored(ops, thread) == before  # nothing changed: state and checkpoints


def test_a_reviewer_decides_once_and_the_record_names_the_reviewer(served):
    alice, rita, ops = _as(served, "alice"), _as(served, "rita"), _as(served, "ops")
    thread = _paused(alice)
    run = f"/threads/{thread}/runs/wait"
    by_operator = ops.post(run, json={"assistant_id": "tool-mad", "command": {"resume": APPROVE}})
    assert by_operator.status_code == 403, by_operator.text  # managing is not deciding
    forged_name = {**APPROVE, "by": "mallory", "at": "1999-01-01T00:00:00+00:00"}
    done = rita.post(run, json={"assistant_id": "tool-mad", "command": {"resume": forged_name}})
    assert done.status_code == 200, done.text
    review = done.json()["review"]
    assert review["status"] == "approved" and review["by"] == "rita"
    assert not review["at"].startswith("1999")  # the server's time, not the payload's
    decided = _stored(ops, thread)
    again = rita.post(run, json={"assistant_id": "tool-mad", "command": {"resume": APPROVE}})
    assert again.status_code == 409 and "already decided" in again.text
    reopen = {"assistant_id": "tool-mad", "checkpoint_id": decided[1][1], "input": None}
    for client, path, payload in (
        (rita, run, reopen),
        (ops, run, reopen),
        (ops, f"/threads/{thread}/state", {"values": {"review": None}}),
        (ops, run, {"assistant_id": "tool-mad", "input": {"claim": CLAIM}}),
        (ops, f"/threads/{thread}/copy", {}),
    ):
        answer = client.post(path, json=payload)
        assert answer.status_code in (403, 409, 422), (path, answer.text)
    assert rita.post("/threads", json={}).status_code == 403  # a reviewer only decides
    assert _stored(ops, thread) == decided


def test_the_operator_sees_every_clients_threads_and_a_client_only_its_own(served):
    alice, bob, ops = _as(served, "alice"), _as(served, "bob"), _as(served, "ops")
    mine = alice.post("/threads", json={}).json()["thread_id"]
    theirs = bob.post("/threads", json={}).json()["thread_id"]
    seen = {t["thread_id"] for t in ops.post("/threads/search", json={"limit": 1000}).json()}
    assert {mine, theirs} <= seen
    alices = {t["thread_id"] for t in alice.post("/threads/search", json={"limit": 1000}).json()}
    assert mine in alices and theirs not in alices
    assert ops.get(f"/threads/{theirs}").status_code == 200
    made = alice.post("/assistants", json={"graph_id": "tool-mad", "name": "alice's"}).json()
    assert made["metadata"]["owner"] == "alice"
    assistant = f"/assistants/{made['assistant_id']}"
    assert alice.patch(assistant, json={"name": "renamed"}).status_code == 403
    assert alice.delete(assistant).status_code == 403  # managing is the operator's
    assert ops.delete(f"/threads/{theirs}").status_code in (200, 204)


async def test_a_bench_run_reads_decisions_only_from_its_own_threads_decided_by_a_run(
    served, monkeypatch: pytest.MonkeyPatch
):
    from factdebate.review.server_queue import QUEUE_ITEM, QUEUE_RUN, adecided, queue_thread_id

    alice, rita = _as(served, "alice"), _as(served, "rita")
    run_id = "run-forge-check"
    claim_run = {"assistant_id": "tool-mad", "input": {"claim": CLAIM}, "context": SETTINGS}
    made: dict[str, str] = {}
    for item, thread_id in (("0", queue_thread_id(run_id, "0")), ("1", None), ("2", None)):
        body: dict[str, Any] = {"metadata": {QUEUE_RUN: run_id, QUEUE_ITEM: item}}
        if thread_id:
            body["thread_id"] = thread_id
        made[item] = alice.post("/threads", json=body).json()["thread_id"]
    for item in ("0", "1"):  # the run's own thread, and one of another id under its metadata
        out = alice.post(f"/threads/{made[item]}/runs/wait", json=claim_run)
        assert out.json().get("__interrupt__"), out.text[:300]
        decided = rita.post(
            f"/threads/{made[item]}/runs/wait",
            json={"assistant_id": "tool-mad", "command": {"resume": APPROVE}},
        )
        assert decided.status_code == 200, decided.text
    forged = {"review": {"status": "approved", "by": "alice"}, "verdict": "REFUTES"}
    written = alice.post(f"/threads/{made['2']}/state", json={"values": forged})
    url, keys = served
    monkeypatch.setenv("LANGGRAPH_API_KEY", keys["ops"])  # what the CLI's client sends
    found = await adecided(url, run_id)
    assert sorted(found) == ["0"], (sorted(found), written.status_code)
    assert found["0"]["review"]["by"] == "rita"


def test_the_review_command_decides_with_a_reviewers_key_and_reports_an_ended_item(
    served, monkeypatch: pytest.MonkeyPatch
):
    from typer.testing import CliRunner

    from factdebate.cli import app
    from factdebate.review.server_queue import QUEUE_ITEM, QUEUE_RUN, queue_thread_id

    alice = _as(served, "alice")
    run_id = "run-cli-check"
    for item, settings in (("5", {"model": "scripted-server"}), ("6", SETTINGS)):
        thread = queue_thread_id(run_id, item)
        metadata = {QUEUE_RUN: run_id, QUEUE_ITEM: item}
        alice.post("/threads", json={"thread_id": thread, "metadata": metadata})
        out = alice.post(
            f"/threads/{thread}/runs/wait",
            json={"assistant_id": "tool-mad", "input": {"claim": CLAIM}, "context": settings},
        )
        assert out.status_code == 200, out.text[:300]
    url, keys = served
    monkeypatch.setenv("LANGGRAPH_API_KEY", keys["rita"])  # the SDK's client sends it
    shown = CliRunner().invoke(app, ["review", "--server", url, "--run", run_id], input="a\n\n")
    assert shown.exit_code == 0, shown.output
    assert "5: ended without a decision" in shown.output
    assert "1 of 1 reviewed" in shown.output
    state = _as(served, "ops").get(f"/threads/{queue_thread_id(run_id, '6')}/state").json()
    assert state["values"]["review"]["by"] == "rita"


async def test_over_the_websocket_too_a_decided_review_is_not_reopened(served):
    """The WebSocket passes no middleware: the auth handler refuses where runs are created."""
    websockets = pytest.importorskip("websockets", reason="websockets is not installed")
    alice, rita, ops = _as(served, "alice"), _as(served, "rita"), _as(served, "ops")
    thread = _paused(alice)
    run = f"/threads/{thread}/runs/wait"
    done = rita.post(run, json={"assistant_id": "tool-mad", "command": {"resume": APPROVE}})
    assert done.status_code == 200, done.text
    decided = _stored(ops, thread)
    runs_before = ops.get(f"/threads/{thread}/runs").json()
    url, keys = served
    address = url.replace("http://", "ws://") + f"/threads/{thread}/stream/events"
    start = {
        "id": 1,
        "method": "run.start",
        "params": {
            "assistant_id": "tool-mad",
            "input": None,
            "config": {"configurable": {"checkpoint_id": decided[1][1]}},
        },
    }
    headers = {"Authorization": f"Bearer {keys['ops']}"}
    async with websockets.connect(address, additional_headers=headers) as ws:
        await ws.send(json.dumps(start))
        answer = json.loads(await ws.recv())
    assert answer.get("id") == 1 and "earlier checkpoint" in json.dumps(answer), answer
    again = {"id": 2, "method": "run.start", "params": {"assistant_id": "tool-mad", "input": CLAIM}}
    again["params"]["input"] = {"claim": "Another claim."}
    owner = {"Authorization": f"Bearer {keys['alice']}"}
    async with websockets.connect(address, additional_headers=owner) as ws:
        await ws.send(json.dumps(again))
        answer = json.loads(await ws.recv())
    assert answer.get("id") == 2 and "new input" in json.dumps(answer), answer
    assert ops.get(f"/threads/{thread}/runs").json() == runs_before  # no run was made
    assert _stored(ops, thread) == decided


async def test_a_bench_with_a_client_key_is_decided_by_a_reviewer_and_synced_by_its_client(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import asyncio

    from typer.testing import CliRunner

    from factdebate.bench import arun_bench, read_results
    from factdebate.cli import app
    from tests.bench.test_runner import make_data

    url, keys = served
    monkeypatch.setenv("LANGGRAPH_API_KEY", keys["alice"])  # what langgraph_sdk's client sends
    out = tmp_path / "run"
    await arun_bench(
        "tool-mad",
        "fever-mini",
        out,
        data_dir=make_data(tmp_path / "data", "S"),
        server_url=url,
        context={**SETTINGS, "max_rounds": 1},
        pages=False,
    )
    (row,) = read_results(out / "results.jsonl")
    run_id = row["review"]["run"]
    runner = CliRunner()
    refused = await asyncio.to_thread(
        runner.invoke, app, ["review", "--server", url, "--run", run_id, "--approve-all"]
    )
    assert "0 of 1 reviewed" in refused.output, refused.output  # a client decides nothing
    monkeypatch.setenv("LANGGRAPH_API_KEY", keys["rita"])
    decided = await asyncio.to_thread(
        runner.invoke, app, ["review", "--server", url, "--run", run_id, "--approve-all"]
    )
    assert "1 of 1 reviewed" in decided.output, decided.output
    monkeypatch.setenv("LANGGRAPH_API_KEY", keys["alice"])
    synced = await asyncio.to_thread(runner.invoke, app, ["review", str(out)])
    assert "1 decision(s) taken on the server" in synced.output, synced.output
    (row,) = read_results(out / "results.jsonl")
    assert row["review"]["status"] == "approved" and row["review"]["by"] == "rita"
