"""A review ends only by a decision, in process: the middleware before a stand-in server.

Each request that would end, rewrite, copy or forge a review without a decision is refused
with one line and never reaches the server; the same requests on a thread with no review
pass unchanged. tests/server/test_auth_live.py sends them to `langgraph dev`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from factdebate.server.app import ContextCheck

THREAD = "0f6c3b2e-8d4a-4c1e-9a7b-3e5d2c1b0a99"
REQUEST = {"kind": "review", "proposed": "SUPPORTS", "choices": ["SUPPORTS", "REFUTES"]}
WAITING = {
    "values": {"verdict": None, "review": {"status": "pending", "proposed": "SUPPORTS"}},
    "next": ["human_review"],
    "tasks": [{"name": "human_review", "interrupts": [{"id": "i-1", "value": REQUEST}]}],
}
DECIDED = {
    "values": {"verdict": "SUPPORTS", "review": {"status": "approved", "by": "rita"}},
    "next": [],
    "tasks": [],
}
PLAIN = {"values": {"verdict": "SUPPORTS"}, "next": [], "tasks": []}


class Server:
    """Answers ``GET /threads/T/state`` with ``state``; records every other request."""

    def __init__(self, state: dict[str, Any], answer: tuple[int, bytes] = (200, b"{}")) -> None:
        self.state = state
        self.answer = answer
        self.reached: list[tuple[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await receive()
        if scope["method"] == "GET" and scope["path"].endswith("/state"):
            status, body = 200, json.dumps(self.state).encode()
        elif scope["method"] == "GET":
            status, body = 200, json.dumps({"status": "idle"}).encode()
        else:
            self.reached.append((scope["method"], scope["path"]))
            status, body = self.answer
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _post(server: Server, path: str, payload: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=ContextCheck(server))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.post(path, json=payload)


RUN = f"/threads/{THREAD}/runs/wait"
CLAIM = {"claim": "The Eiffel Tower is in Paris."}
APPROVE = {"decisions": [{"type": "approve"}]}
# Each request that would end or rewrite a review without a decision (the cases).
UNDECIDED = {
    "command.update rewrites the proposal": (
        RUN,
        {"assistant_id": "tool-mad", "command": {"update": {"verdict": "REFUTES"}}},
    ),
    "command.update beside a decision": (
        RUN,
        {"assistant_id": "tool-mad", "command": {"resume": APPROVE, "update": {"x": 1}}},
    ),
    "command.goto jumps past it": (
        f"/threads/{THREAD}/runs",
        {"assistant_id": "tool-mad", "command": {"goto": "__end__"}},
    ),
    "new input ends it": (RUN, {"assistant_id": "tool-mad", "input": CLAIM}),
    "new input streamed": (f"/threads/{THREAD}/runs/stream", {"assistant_id": "t", "input": CLAIM}),
    "a run from checkpoint_id": (
        RUN,
        {"assistant_id": "tool-mad", "checkpoint_id": "1ef-paused", "command": {"resume": APPROVE}},
    ),
    "a run from checkpoint": (
        RUN,
        {"assistant_id": "tool-mad", "input": None, "checkpoint": {"checkpoint_id": "1ef"}},
    ),
    "a run from config.configurable.checkpoint_id": (
        RUN,
        {"assistant_id": "tool-mad", "config": {"configurable": {"checkpoint_id": "1ef"}}},
    ),
    "a copy of the thread": (f"/threads/{THREAD}/copy", {}),
    "a cron with input on the thread": (
        f"/threads/{THREAD}/runs/crons",
        {"assistant_id": "tool-mad", "schedule": "* * * * *", "input": CLAIM},
    ),
    "v2 run.start from a checkpoint": (
        f"/threads/{THREAD}/commands",
        {
            "id": 1,
            "method": "run.start",
            "params": {"assistant_id": "tool-mad", "input": APPROVE, "checkpoint_id": "1ef"},
        },
    ),
}


@pytest.mark.parametrize("case", sorted(UNDECIDED))
@pytest.mark.parametrize("state", [WAITING, DECIDED], ids=["awaiting", "decided"])
async def test_nothing_but_a_decision_ends_or_rewrites_a_review(case: str, state: dict[str, Any]):
    path, payload = UNDECIDED[case]
    server = Server(state)
    response = await _post(server, path, payload)
    assert response.status_code in (409, 422), (case, response.text)
    detail = response.json()["detail"]
    assert "\n" not in detail and THREAD in detail, detail
    assert server.reached == [], case  # the server never saw it


@pytest.mark.parametrize("case", sorted(UNDECIDED))
async def test_the_same_requests_on_a_thread_without_review_pass_unchanged(case: str):
    path, payload = UNDECIDED[case]
    server = Server(PLAIN)
    response = await _post(server, path, payload)
    assert response.status_code == 200, (case, response.text)
    assert server.reached == [("POST", path)]


async def test_a_decided_threads_state_is_not_written_again_nor_reopened():
    server = Server(DECIDED)
    write = {"values": {"review": None, "verdict": "REFUTES"}, "as_node": "human_review"}
    response = await _post(server, f"/threads/{THREAD}/state", write)
    assert response.status_code == 409 and "already decided" in response.json()["detail"]
    again = await _post(server, RUN, {"assistant_id": "tool-mad", "command": {"resume": APPROVE}})
    assert again.status_code == 409
    assert server.reached == []


async def test_a_paused_review_is_still_decided_by_a_decision():
    server = Server(WAITING)
    response = await _post(
        server, RUN, {"assistant_id": "tool-mad", "command": {"resume": APPROVE}}
    )
    assert response.status_code == 200, response.text
    assert server.reached == [("POST", RUN)]


@pytest.mark.parametrize(
    "supersteps",
    [
        [{"updates": [{"values": {"review": {"status": "approved"}}, "as_node": "human_review"}]}],
        [{"updates": [{"values": CLAIM, "as_node": "__input__"}]}],
    ],
)
async def test_a_thread_made_from_supersteps_is_refused(supersteps: list[Any]):
    server = Server(PLAIN)
    payload = {"metadata": {"bench_run": "r", "bench_item": "0"}, "supersteps": supersteps}
    response = await _post(server, "/threads", payload)
    assert response.status_code == 422 and "supersteps" in response.json()["detail"]
    assert server.reached == []
    plain = await _post(server, "/threads", {"metadata": {"bench_run": "r"}})
    assert plain.status_code == 200 and server.reached == [("POST", "/threads")]


async def test_an_error_body_the_server_writes_has_its_passwords_redacted():
    echoed = json.dumps({"detail": "bad value postgresql://u:hunter2secret@db:5432/x"}).encode()
    server = Server(PLAIN, answer=(422, echoed))
    response = await _post(server, "/threads/search", {"metadata": {"x": 1}})
    assert response.status_code == 422
    assert "hunter2secret" not in response.text and "[redacted]" in response.text
    assert int(response.headers["content-length"]) == len(response.content)


async def test_our_own_422_is_redacted_too():
    server = Server(PLAIN)
    context = {"milvus_uri": "http://root:hunter2secret@10.0.0.9:19530"}
    response = await _post(server, "/runs/wait", {"assistant_id": "tool-mad", "context": context})
    assert response.status_code == 422
    assert "hunter2secret" not in response.text


@pytest.mark.parametrize(
    ("path", "payload"),
    [
        ("/runs/wait", {"assistant_id": "tool-mad", "webhook": "http://10.0.0.9/hook"}),
        (f"/threads/{THREAD}/runs", {"assistant_id": "tool-mad", "webhook": "http://x/h"}),
        ("/runs/crons", {"assistant_id": "tool-mad", "schedule": "* * * * *", "webhook": "h"}),
        (
            f"/threads/{THREAD}/commands",
            {"id": 1, "method": "run.start", "params": {"assistant_id": "t", "webhook": "h"}},
        ),
    ],
)
async def test_a_run_never_sends_its_output_to_an_address_the_request_names(
    path: str, payload: dict[str, Any]
):
    server = Server(PLAIN)
    response = await _post(server, path, payload)
    assert response.status_code == 422 and "webhooks" in response.json()["detail"]
    assert server.reached == []


def test_a_decision_counts_only_as_the_last_step_of_a_run_naming_its_reviewer():
    from factdebate.review.server_queue import own_thread, queue_thread_id, server_decided

    values = {"review": {"status": "approved", "by": "rita"}}
    assert server_decided(values, {"source": "loop", "langgraph_auth_user_id": "rita"})
    assert not server_decided(values, {"source": "update", "langgraph_auth_user_id": "rita"})
    assert not server_decided(values, {"source": "loop", "langgraph_auth_user_id": "alice"})
    assert not server_decided({"review": {"status": "pending"}}, {"source": "loop"})
    local = {"review": {"status": "overruled", "by": "local"}}
    assert server_decided(local, {"source": "loop", "langgraph_auth_user_id": ""})  # open server
    meta = {"bench_run": "r", "bench_item": "7"}
    assert own_thread({"thread_id": queue_thread_id("r", "7"), "metadata": meta}, "r")
    assert not own_thread({"thread_id": queue_thread_id("r", "8"), "metadata": meta}, "r")
    assert not own_thread({"thread_id": queue_thread_id("r", "7"), "metadata": meta}, "other")


def test_a_copied_run_folder_decides_its_own_queue_never_the_originals(
    tmp_path: Path, scripted: Any, monkeypatch: pytest.MonkeyPatch
):
    from factdebate.bench import read_results
    from factdebate.bench.running.review_queue import apply_decision, pending_items
    from tests.bench.test_review_queue import review_bench

    monkeypatch.chdir(tmp_path)
    run, _ = review_bench(Path("."), scripted)  # a relative run folder, as typed
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    first = str(read_results(copy / "results.jsonl")[0]["id"])
    assert apply_decision(copy, first, {"approve": True})["review"]["status"] == "approved"
    assert [str(row["id"]) for row, _ in pending_items(run)] == [
        str(r["id"]) for r in read_results(run / "results.jsonl")
    ]  # the original still waits on both items
    assert first not in {str(row["id"]) for row, _ in pending_items(copy)}


def test_a_decided_threads_review_never_rewrites_where_the_row_waited(tmp_path: Path):
    from factdebate.bench.running.review_queue import take_decision

    row: dict[str, Any] = {
        "id": "0",
        "review": {"status": "pending", "server": "http://127.0.0.1:2024", "run": "r-1"},
    }
    result = {
        "verdict": "REFUTES",
        "review": {
            "status": "overruled",
            "by": "rita",
            "note": "n",
            "server": "http://attacker.example",
            "checkpoint": "sqlite:/etc/passwd",
            "run": "other",
        },
    }
    take_decision(tmp_path, {"method": "tool-mad"}, row, result, "label")
    assert row["review"] == {
        "status": "overruled",
        "server": "http://127.0.0.1:2024",
        "run": "r-1",
        "by": "rita",
        "note": "n",
    }
