"""A2A through `a2a-sdk`'s client on `langgraph dev`: a text message is the claim, data works too.

One server for the module serves Tool-MAD on the scripted model (tests/server_graph.py)
behind the project's ``http.app``. What langgraph-api's A2A route does not do (JSON
artifacts, streamed events this client reads, the verdict from GetTask) is in
docs/deployment.md; these tests pin what works.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from factdebate.server.a2a_input import text_as_input
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

pytest.importorskip("a2a", reason="a2a-sdk is not installed (pip install '.[dev]')")
pytestmark = pytest.mark.service


def test_a_text_only_message_becomes_the_methods_input():
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
    text = {**send, "params": {"message": {"role": "ROLE_USER", "parts": [{"text": f" {CLAIM} "}]}}}
    rewritten = text_as_input(text, "tool-mad")
    assert rewritten["params"]["message"]["parts"] == [{"data": {"claim": CLAIM}}]
    old = {
        **send,
        "method": "message/send",
        "params": {"message": {"parts": [{"kind": "text", "text": "Q?"}]}},
    }
    assert text_as_input(old, "madam-rag")["params"]["message"]["parts"] == [
        {"kind": "data", "data": {"question": "Q?"}}
    ]
    data = {**send, "params": {"message": {"parts": [{"data": {"claim": CLAIM}}]}}}
    assert text_as_input(data, "tool-mad") is data  # data parts pass as they are
    assert text_as_input(text, "mad-fact") is text  # an answer needs its question: data only
    assert text_as_input(text, None) is text  # an unknown target is left to the server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanggraphDev]:
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(
        tmp_path_factory.mktemp("a2a"), {"tool-mad": graph}, {"FACTDEBATE_MODEL": "scripted-server"}
    )
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


async def _client(server: LanggraphDev, http: httpx.AsyncClient, streaming: bool) -> Any:
    from a2a.client import ClientConfig, create_client
    from a2a.types import AgentCard
    from google.protobuf.json_format import ParseDict

    found = httpx.post(f"{server.url}/assistants/search", json={"graph_id": "tool-mad"}).json()
    card = httpx.get(
        f"{server.url}/.well-known/agent-card.json",
        params={"assistant_id": found[0]["assistant_id"]},
        timeout=COMMAND_GUARD_S,
    ).json()
    assert "text/plain" in card["defaultInputModes"]
    agent = ParseDict(card, AgentCard(), ignore_unknown_fields=True)
    return await create_client(agent, ClientConfig(streaming=streaming, httpx_client=http))


@pytest.mark.parametrize("shape", ["text", "data"])
async def test_a_message_gets_the_verdict_and_the_task_is_completed(
    server: LanggraphDev, shape: str
):
    from a2a.helpers.proto_helpers import new_data_message, new_text_message
    from a2a.types import GetTaskRequest, Role, SendMessageRequest, TaskState

    message = (
        new_text_message(CLAIM, role=Role.ROLE_USER)
        if shape == "text"
        else new_data_message({"claim": CLAIM}, role=Role.ROLE_USER)
    )
    async with httpx.AsyncClient(timeout=COMMAND_GUARD_S) as http:
        client = await _client(server, http, streaming=False)
        events = [e async for e in client.send_message(SendMessageRequest(message=message))]
        (task,) = [e.task for e in events if e.HasField("task")]
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        shown = " ".join(p.text for a in task.artifacts for p in a.parts)
        assert "'verdict': 'SUPPORTS'" in shown  # langgraph-api writes the output's literal
        later = await client.get_task(GetTaskRequest(id=task.id))
    assert later.status.state == TaskState.TASK_STATE_COMPLETED
