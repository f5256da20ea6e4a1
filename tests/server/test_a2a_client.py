"""The server's A2A endpoint through `a2a-sdk` 1.3.0's own client on `langgraph dev`.

One server for the module serves Tool-MAD on the scripted models of
tests/server/mcp_client_graph.py (``scripted-server``, and ``scripted-slow`` for a run long
enough to cancel) behind the project's ``http.app``, which routes ``/a2a/...`` to
factdebate's endpoint (factdebate/server/a2a_endpoint.py) ahead of langgraph-api's, and its
``auth``, with a key file of a client and a reviewer: every call presents the client's key
unless a test says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from factdebate.graphs.registry import CONTRACT_KEYS, METHODS
from factdebate.nodes.review import NEEDS_THREAD
from factdebate.server.a2a_input import message_arguments, request_settings
from factdebate.server.keys import issue
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

pytestmark = pytest.mark.service
PRINCIPALS = {"alice": "client", "rita": "reviewer"}


def test_a_messages_parts_are_the_methods_input_and_its_context_the_settings():
    tool_mad, madam, mad_fact = METHODS["tool-mad"], METHODS["madam-rag"], METHODS["mad-fact"]
    text = {"parts": [{"text": f" {CLAIM} "}]}
    assert message_arguments(tool_mad, text) == {"claim": CLAIM}
    assert message_arguments(madam, {"parts": [{"text": "Q?"}]}) == {"question": "Q?"}
    data = {"parts": [{"data": {"question": "Q?"}}, {"data": {"answer": "A."}}]}
    assert message_arguments(mad_fact, data) == {"question": "Q?", "answer": "A."}
    for message, words in [
        (text, None),
        ({"parts": []}, "has no parts"),
        ({"parts": [{"url": "http://x/doc.pdf"}]}, "text and data parts only"),
        ({"parts": [{"text": "a"}, {"data": {"claim": "b"}}]}, "not both"),
        ({"parts": [{"data": ["a"]}]}, "must be an object"),
        ({"parts": [{"data": {"claim": "a", "settings": {}}}]}, "request's context"),
    ]:
        if words is None:
            with pytest.raises(ValueError, match="scores a long answer"):
                message_arguments(mad_fact, message)  # an answer needs its question: data only
            continue
        with pytest.raises(ValueError, match=words):
            message_arguments(tool_mad, message)
    assert request_settings({"context": {"max_rounds": 2}}) == {"max_rounds": 2}
    assert request_settings({"metadata": {"context": {"max_rounds": 2}}}) == {"max_rounds": 2}
    assert request_settings({"message": {}}) == {}
    with pytest.raises(ValueError, match="different settings"):
        request_settings({"context": {"max_rounds": 2}, "metadata": {"context": {"top_k": 3}}})
    with pytest.raises(ValueError, match="must be an object"):
        request_settings({"context": "max_rounds=2"})


async def test_the_task_store_keeps_each_callers_latest_tasks_only():
    from a2a.server.context import ServerCallContext
    from a2a.types import Task

    from factdebate.server.a2a_endpoint import BoundedTaskStore

    store = BoundedTaskStore(limit=2)
    alice, bob = (ServerCallContext(state={"owner": who}) for who in ("alice", "bob"))
    for task_id, caller in (("t1", alice), ("t2", bob), ("t1", alice), ("t3", alice)):
        await store.save(Task(id=task_id, context_id="c"), caller)
    assert await store.get("t1", alice) is None  # the oldest, forgotten past the limit
    assert await store.get("t3", alice) is not None and await store.get("t2", bob) is not None
    assert await store.get("t2", alice) is None  # a caller sees its own tasks only
    with pytest.raises(ValueError, match="task limit"):
        BoundedTaskStore(limit=0)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LanggraphDev, dict]]:
    """The server and each principal's key."""
    folder = tmp_path_factory.mktemp("a2a")
    keyfile = folder / "keys.json"
    keys = {name: issue(keyfile, name, role) for name, role in PRINCIPALS.items()}
    graph = str(REPO / "tests" / "server" / "mcp_client_graph.py") + ":graph"
    env = {"FACTDEBATE_MODEL": "scripted-server", "FACTDEBATE_SERVER_KEYS": str(keyfile)}
    dev = LanggraphDev(folder, {"tool-mad": graph}, env)
    config = json.loads((folder / "langgraph.json").read_text())
    config["auth"] = json.loads((REPO / "langgraph.json").read_text())["auth"]
    (folder / "langgraph.json").write_text(json.dumps(config))
    dev.start()
    try:
        yield dev, keys
    finally:
        dev.stop()


def _http(served: tuple[LanggraphDev, dict], who: str = "alice") -> httpx.AsyncClient:
    _, keys = served
    headers = {"Authorization": f"Bearer {keys[who]}"}
    return httpx.AsyncClient(headers=headers, timeout=COMMAND_GUARD_S)


async def _client(
    served: tuple[LanggraphDev, dict],
    http: httpx.AsyncClient,
    path: str = "/a2a/tool-mad",
    **config: Any,
) -> Any:
    """a2a-sdk's client for the agent at ``path``, its card resolved at the well-known path."""
    from a2a.client import ClientConfig, create_client

    dev, _ = served
    return await create_client(f"{dev.url}{path}", ClientConfig(httpx_client=http, **config))


def _message(shape: str, settings: dict[str, Any] | None = None) -> Any:
    from a2a.helpers.proto_helpers import new_data_message, new_text_message
    from a2a.types import Role, SendMessageRequest

    message = (
        new_text_message(CLAIM, role=Role.ROLE_USER)
        if shape == "text"
        else new_data_message({"claim": CLAIM}, role=Role.ROLE_USER)
    )
    request = SendMessageRequest(message=message)
    if settings is not None:
        request.metadata.update({"context": settings})
    return request


def _result(artifacts: Any) -> dict[str, Any]:
    """The result contract an artifact holds, as its JSON text part says it (checked as data)."""
    from a2a.helpers.proto_helpers import get_data_parts, get_text_parts

    (artifact,) = artifacts
    (data,) = get_data_parts(artifact.parts)
    (text,) = get_text_parts(artifact.parts)
    result = json.loads(text)  # JSON, not a Python literal
    assert data["verdict"] == result["verdict"] and set(data) == set(result)
    return dict(result)


async def test_the_agent_card_declares_the_protocol_a2a_sdk_speaks(served):
    dev, _ = served
    async with _http(served) as http:
        found = await http.post(f"{dev.url}/assistants/search", json={"graph_id": "tool-mad"})
        assistant = found.json()[0]["assistant_id"]
        by_query = await http.get(
            f"{dev.url}/.well-known/agent-card.json", params={"assistant_id": assistant}
        )
        by_path = await http.get(f"{dev.url}/a2a/tool-mad/.well-known/agent-card.json")
        at_url = await http.get(f"{dev.url}/a2a/tool-mad")
        missing = await http.get(f"{dev.url}/a2a/no-such-method/.well-known/agent-card.json")
    assert by_query.status_code == 200 and by_path.status_code == 200, by_query.text
    card, named = by_query.json(), by_path.json()
    (interface,) = card["supportedInterfaces"]
    assert interface["protocolBinding"] == "JSONRPC" and interface["protocolVersion"] == "1.0"
    assert interface["url"] == f"{dev.url}/a2a/{assistant}"
    assert card["skills"][0]["id"] == "tool-mad"  # factdebate's card, not langgraph-api's
    assert named["supportedInterfaces"][0]["url"] == f"{dev.url}/a2a/tool-mad"
    assert at_url.json() == named  # GET on the agent's URL: the same card
    assert card["capabilities"]["streaming"] is True
    assert card["description"] == METHODS["tool-mad"].tool_description
    assert {"text/plain", "application/json"} <= set(card["defaultInputModes"])
    assert missing.status_code == 404 and "no method or assistant" in missing.json()["detail"]


@pytest.mark.parametrize("shape", ["text", "data"])
async def test_a_message_gets_the_verdict_as_a_json_artifact_and_get_task_returns_it(
    served, shape: str
):
    from a2a.types import GetTaskRequest, TaskState

    async with _http(served) as http:
        client = await _client(served, http, streaming=False)
        events = [e async for e in client.send_message(_message(shape))]
        (task,) = [e.task for e in events if e.HasField("task")]
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
        result = _result(task.artifacts)
        later = await client.get_task(GetTaskRequest(id=task.id))
    assert set(CONTRACT_KEYS) <= set(result)
    assert result["verdict"] == "SUPPORTS" and result["stop_reason"] == "consensus"
    assert result["cost"]["total"]["llm_calls"] > 0
    assert later.status.state == TaskState.TASK_STATE_COMPLETED
    assert _result(later.artifacts) == result  # the verdict can be fetched afterwards


async def test_streaming_yields_each_finished_step_then_the_artifact_then_completed(served):
    from a2a.helpers.proto_helpers import get_text_parts
    from a2a.types import GetTaskRequest, TaskState

    async with _http(served) as http:
        client = await _client(served, http, streaming=True)
        events = [e async for e in client.send_message(_message("text"))]
        kinds = [e.WhichOneof("payload") for e in events]
        steps = [
            e.status_update
            for e in events
            if e.HasField("status_update")
            and e.status_update.status.state == TaskState.TASK_STATE_WORKING
            and e.status_update.status.message.parts
        ]
        (artifact,) = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
        last = events[-1].status_update
        later = await client.get_task(GetTaskRequest(id=last.task_id))
    assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
    assert last.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(steps) >= 3, kinds  # one per finished node: the debate's steps as they end
    words = [get_text_parts(s.status.message.parts)[0] for s in steps]
    assert all(w.endswith("finished") or "finished (round" in w for w in words), words
    assert kinds.index("artifact_update") > max(i for i, k in enumerate(kinds) if k == "task")
    assert _result([artifact])["verdict"] == "SUPPORTS"
    assert _result(later.artifacts)["verdict"] == "SUPPORTS"


@pytest.mark.parametrize(
    ("shape", "settings", "words"),
    [
        ("empty", None, "the claim is empty"),
        ("data", {"max_rounds": 0}, "max_rounds"),
        ("data", {"colour": "red"}, "colour"),
        ("text", {"review": True}, NEEDS_THREAD),
        ("data", {"model": "openai:gpt-4o-mini@http://evil"}, "is not allowed on this server"),
        ("data", {"model": "openai-compatible:m@http://u:s3cret-key@evil/v1"}, "[redacted]"),
    ],
)
async def test_a_bad_argument_is_a_json_rpc_error_with_the_clis_one_line(
    served, shape: str, settings: dict[str, Any] | None, words: str
):
    from a2a.helpers.proto_helpers import new_text_message
    from a2a.types import Role, SendMessageRequest
    from a2a.utils.errors import A2AError

    request = _message("data" if shape == "empty" else shape, settings)
    if shape == "empty":
        request = SendMessageRequest(message=new_text_message("  ", role=Role.ROLE_USER))
    async with _http(served) as http:
        client = await _client(served, http, streaming=False)
        with pytest.raises(A2AError) as caught:
            _ = [e async for e in client.send_message(request)]
    line = str(caught.value)
    assert words in line and "\n" not in line and "s3cret" not in line, line


async def test_an_assistant_with_review_built_in_is_refused_in_one_line(served):
    """Its review would pause where no thread keeps the pause: refused before any run."""
    from a2a.utils.errors import A2AError

    dev, _ = served
    async with _http(served) as http:
        made = await http.post(
            f"{dev.url}/assistants", json={"graph_id": "tool-mad", "context": {"review": True}}
        )
        assert made.status_code == 200, made.text
        assistant = made.json()["assistant_id"]
        client = await _client(served, http, streaming=False, path=f"/a2a/{assistant}")
        with pytest.raises(A2AError) as caught:
            _ = [e async for e in client.send_message(_message("text"))]
    assert str(caught.value) == NEEDS_THREAD


async def test_settings_in_params_context_reach_the_run(served):
    """A caller that writes the JSON itself names settings where LangGraph's route read them."""
    dev, _ = served
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": CLAIM}]}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
    headers = {"A2A-Version": "1.0"}
    async with _http(served) as http:
        review = {**rpc, "params": {"message": message, "context": {"review": True}}}
        refused = await http.post(f"{dev.url}/a2a/tool-mad", json=review, headers=headers)
        one = {**rpc, "params": {"message": message, "context": {"max_rounds": 1}}}
        done = await http.post(f"{dev.url}/a2a/tool-mad", json=one, headers=headers)
    assert refused.json()["error"]["message"] == NEEDS_THREAD  # read by the endpoint itself
    task = done.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    (artifact,) = task["artifacts"]
    (text,) = [p["text"] for p in artifact["parts"] if "text" in p]
    assert json.loads(text)["rounds"] == 1


async def test_a2a_needs_a_key_that_may_start_runs(served):
    dev, _ = served
    async with httpx.AsyncClient(timeout=COMMAND_GUARD_S) as anonymous:
        card = await anonymous.get(f"{dev.url}/a2a/tool-mad/.well-known/agent-card.json")
        call = await anonymous.post(f"{dev.url}/a2a/tool-mad", json={"jsonrpc": "2.0", "id": 1})
    assert card.status_code == 401 and call.status_code == 401, (card.text, call.text)
    async with _http(served, "rita") as reviewer:
        call = await reviewer.post(f"{dev.url}/a2a/tool-mad", json={"jsonrpc": "2.0", "id": 1})
        card = await reviewer.get(f"{dev.url}/a2a/tool-mad/.well-known/agent-card.json")
    assert call.status_code == 403 and "may not start runs" in call.text
    assert card.status_code == 403


async def test_cancel_task_ends_the_run(served):
    from a2a.types import CancelTaskRequest, GetTaskRequest, TaskState

    dev, _ = served
    async with _http(served) as http:
        client = await _client(served, http, streaming=True)
        request = _message("text", {"model": "scripted-slow"})
        task_id, cancelled = "", None
        async for event in client.send_message(request):
            if event.HasField("task"):
                task_id = event.task.id
            elif event.HasField("status_update") and event.status_update.status.message.parts:
                cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
                break  # a step has finished: the run is going on
        later = await client.get_task(GetTaskRequest(id=task_id))
    assert cancelled is not None and cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert later.status.state == TaskState.TASK_STATE_CANCELED and not later.artifacts
    log = dev.folder / "server.log"
    with anyio.fail_after(COMMAND_GUARD_S):
        while "on_disconnect=cancel" not in log.read_text(errors="replace"):
            await anyio.sleep(0.2)  # the server ends the run the task started


async def test_a_caller_that_leaves_finds_the_verdict_with_get_task(served):
    from a2a.types import GetTaskRequest, TaskState

    async with _http(served) as http:
        client = await _client(served, http, streaming=True)
        request = _message("text", {"model": "scripted-slow"})
        task_id = ""
        async for event in client.send_message(request):
            if event.HasField("task"):
                task_id = event.task.id
            elif event.HasField("status_update") and event.status_update.status.message.parts:
                break  # the caller goes away while the run goes on
    async with _http(served) as http:
        client = await _client(served, http, streaming=False)
        with anyio.fail_after(COMMAND_GUARD_S):
            task = await client.get_task(GetTaskRequest(id=task_id))
            while task.status.state == TaskState.TASK_STATE_WORKING:
                await anyio.sleep(0.5)
                task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    assert _result(task.artifacts)["verdict"] == "SUPPORTS"
