"""A server's clients cannot point it at hosts or paths: operator settings are allow-listed.

Each case sends a setting that reaches the network or the disk, through every route that
creates or changes runs and assistants, and expects a 422 before anything reaches the
server (or, live, any host or path the client named).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.bounded import COMMAND_GUARD_S
from tests.capture_server import CaptureServer, capture_server
from tests.context_check import send

KEY = "sk-operator-SECRET-4711"
MILVUS_TOKEN = "root:operator-SECRET-0815"
HOSTILE: list[tuple[str, Any]] = [
    ("model", "openai-compatible:m@http://127.0.0.1:9/v1?x=1"),
    ("judge_model", "openai-compatible:m@http://evil.example/v1"),
    ("debater_model", "hf-local:/etc"),
    ("scorer_model", "hf:owner/repo/file.gguf"),
    ("model", "anthropic:claude-3-5-haiku-latest"),
    ("milvus_uri", "/tmp/client-chosen/milvus.db"),
    ("milvus_uri", "http://127.0.0.1:9"),
    ("milvus_uri", "unix:/tmp/milvus.sock"),
    ("rerank_model", "/etc"),
    ("embed_model", "/srv/encoder"),
    ("relevance_encoder", "openai:text-embedding-3-small"),
    ("collection", "never_indexed"),
    ("milvus_uri", "  "),  # blank is not the default: it would reach the client as sent
    ("collection", " default"),
    ("evidence_from", "/srv/snapshot"),
    ("evidence_from", " "),
]


ROUTES = [
    ("POST", "/runs/wait", lambda s: {"assistant_id": "tool-mad", "context": s}),
    ("POST", "/runs/stream", lambda s: {"assistant_id": "tool-mad", "config": {"configurable": s}}),
    ("POST", "/threads/t-1/runs", lambda s: {"assistant_id": "a-uuid", "context": s}),
    (
        "POST",
        "/threads/t-1/runs/wait",
        lambda s: {"assistant_id": "tool-mad", "config": {"configurable": {"thread_id": "t", **s}}},
    ),
    ("POST", "/runs/batch", lambda s: [{"assistant_id": "tool-mad", "context": s}]),
    (
        "POST",
        "/runs/crons",
        lambda s: {"assistant_id": "tool-mad", "schedule": "* * * * *", "context": s},
    ),
    ("POST", "/assistants", lambda s: {"graph_id": "tool-mad", "context": s}),
    ("POST", "/assistants", lambda s: {"graph_id": "tool-mad", "config": {"configurable": s}}),
    ("PATCH", "/assistants/a-uuid", lambda s: {"context": s}),
    ("PATCH", "/assistants/a-uuid", lambda s: {"config": {"configurable": s}}),
    ("PATCH", "/runs/crons/c-uuid", lambda s: {"context": s}),
]


@pytest.fixture(autouse=True)
def operator_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No allow-lists, an empty data home: only the defaults are the operator's."""
    for name in (
        "FACTDEBATE_SERVED_MODELS",
        "FACTDEBATE_SERVED_MILVUS_URIS",
        "FACTDEBATE_SERVED_ENCODERS",
        "FACTDEBATE_SERVED_COLLECTIONS",
        "FACTDEBATE_SERVED_EVIDENCE",
        "FACTDEBATE_MODEL",
        "FACTDEBATE_JUDGE_MODEL",
        "FACTDEBATE_DEBATER_MODEL",
        "FACTDEBATE_SCORER_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("FACTDEBATE_HOME", str(home))
    return home


@pytest.mark.parametrize(("name", "value"), HOSTILE)
@pytest.mark.parametrize(("method", "path", "wrap"), ROUTES)
async def test_a_client_named_host_or_path_is_refused_on_every_route(
    method: str, path: str, wrap: Any, name: str, value: Any
):
    response, downstream = await send(method, path, wrap({name: value}))
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert f"setting {name}=" in detail and "not allowed on this server" in detail
    assert downstream.bodies == []


async def test_model_lists_are_checked_item_by_item():
    payload = {
        "assistant_id": "mad-fact",
        "context": {
            "juror_models": ["local", "local", "openai-compatible:m@http://127.0.0.1:9/v1"]
        },
    }
    response, downstream = await send("POST", "/runs/wait", payload)
    assert response.status_code == 422
    assert "setting juror_models=" in response.json()["detail"]
    assert downstream.bodies == []


async def test_bad_types_in_config_configurable_are_refused_like_context():
    payload = {"assistant_id": "tool-mad", "config": {"configurable": {"max_rounds": "abc"}}}
    response, downstream = await send("POST", "/threads/t/runs/wait", payload)
    assert response.status_code == 422
    assert "setting max_rounds must be an integer" in response.json()["detail"]
    assert downstream.bodies == []


async def test_what_the_operator_allowed_passes(
    operator_env: Path, monkeypatch: pytest.MonkeyPatch
):
    url_model = "openai-compatible:qwen@http://gpu-box:8000/v1"
    monkeypatch.setenv("FACTDEBATE_SERVED_MODELS", f"{url_model}, openai:gpt-4o-mini")
    monkeypatch.setenv("FACTDEBATE_JUDGE_MODEL", "anthropic:claude-3-5-haiku-latest")
    monkeypatch.setenv("FACTDEBATE_SERVED_MILVUS_URIS", "http://milvus:19530")
    monkeypatch.setenv("FACTDEBATE_SERVED_ENCODERS", "BAAI/bge-reranker-base")
    (operator_env / "manifests").mkdir(parents=True)
    (operator_env / "manifests" / "scifact.json").write_text("{}")
    allowed = {
        "model": url_model,
        "debater_model": "openai:gpt-4o-mini",
        "judge_model": "anthropic:claude-3-5-haiku-latest",
        "scorer_model": "",
        "milvus_uri": "http://milvus:19530",
        "rerank_model": "BAAI/bge-reranker-base",
        "relevance_encoder": "all-MiniLM-L6-v2",
        "collection": "scifact",
        "max_rounds": 2,
    }
    for method, path, wrap in ROUTES:
        payload = wrap(allowed)
        response, downstream = await send(method, path, payload)
        assert response.status_code == 200, (path, response.text)
        sent = json.loads(downstream.bodies[0])
        if isinstance(payload, dict):  # the server gets the settings as sent
            sent = {k: v for k, v in sent.items() if k in payload}
        assert sent == payload


async def test_defaults_pass_without_any_allow_list():
    context = {"model": "local", "collection": "default", "milvus_uri": "", "embed_model": ""}
    response, _ = await send("POST", "/runs/wait", {"assistant_id": "tool-mad", "context": context})
    assert response.status_code == 200


def test_an_openai_key_is_not_sent_to_another_host(monkeypatch: pytest.MonkeyPatch):
    """The CLI/API keep any endpoint, but OpenAI's key goes only where it was configured."""
    from factdebate.tools.models.providers import resolve_model

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    with capture_server() as capture:
        model = resolve_model(f"openai-compatible:m@{capture.url}/v1", timeout=5.0, max_tokens=17)
        with pytest.raises(Exception):  # noqa: B017 - the capture server answers 500
            model.invoke("hello")
        seen = capture.text()
    assert "POST /v1/chat/completions" in seen
    assert KEY not in seen


def test_an_endpoint_key_goes_to_the_endpoint_it_was_configured_for(
    monkeypatch: pytest.MonkeyPatch,
):
    from factdebate.tools.models.providers import endpoint_key

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.internal:8080/v1")
    assert endpoint_key("http://gateway.internal:8080/v1") == KEY
    assert endpoint_key("https://api.openai.com/v1") == KEY
    assert endpoint_key("http://gateway.internal:8081/v1") == "not-needed"
    assert endpoint_key("http://127.0.0.1:8080/v1") == "not-needed"
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "vllm-key-123")
    assert endpoint_key("http://vllm:8000/v1") == "vllm-key-123"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, CaptureServer, Path]]:
    """`langgraph dev` with the middleware, the operator's keys and one indexed collection."""
    from tests.conftest import REPO
    from tests.langgraph_server import LanggraphDev

    folder = tmp_path_factory.mktemp("langgraph-dev")
    (folder / "home" / "manifests").mkdir(parents=True)
    (folder / "home" / "manifests" / "scifact.json").write_text("{}")  # the operator indexed it
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    env = {"OPENAI_API_KEY": KEY, "FACTDEBATE_MILVUS_TOKEN": MILVUS_TOKEN}
    with capture_server() as capture:
        dev = LanggraphDev(folder, {"tool-mad": graph}, env=env)
        dev.start()
        try:
            yield dev.url, capture, folder
        finally:
            dev.stop()
        assert capture.received == [], capture.text()[:500]


def _detail(response: httpx.Response) -> str:
    """The one-line detail of a 422."""
    assert response.status_code == 422, (response.request.url, response.text[:300])
    detail = str(response.json()["detail"])
    assert "\n" not in detail
    return detail


@pytest.mark.service
async def test_a_live_server_sends_no_key_to_a_client_named_host_and_writes_no_client_path(
    live: tuple[str, CaptureServer, Path], tmp_path: Path
):
    """`langgraph dev` with the operator's keys: every route refuses in one line, nothing leaves.

    The routes the middleware knows answer 422 before a run exists; the WebSocket, which it
    does not see, is refused by the served graph when the run starts.
    """
    from langgraph_sdk import get_client

    from tests.langgraph_server import websocket_run_failure

    url, capture, _ = live
    target = tmp_path / "client-chosen" / "milvus.db"
    hostile = [
        {"model": f"openai-compatible:m@{capture.url}/v1"},
        {"milvus_uri": capture.url},  # a gRPC client's HTTP/2 preface would be captured too
        {"milvus_uri": str(target)},
        {"rerank_model": str(target.parent)},
    ]
    claim = {"claim": "The Eiffel Tower is located in Paris."}
    client = get_client(url=url)
    raw = httpx.AsyncClient(base_url=url, timeout=COMMAND_GUARD_S)
    thread = (await client.threads.create())["thread_id"]
    assistant = await client.assistants.create("tool-mad")
    aid = assistant["assistant_id"]
    for settings in hostile:
        (name,) = settings
        sdk_attempts = [
            client.runs.wait(None, "tool-mad", input=claim, context=settings),
            client.runs.wait(thread, "tool-mad", input=claim, config={"configurable": settings}),
            client.runs.wait(None, aid, input=claim, context=settings),  # an assistant by id
            client.assistants.create("tool-mad", context=settings),
            client.assistants.update(aid, context=settings),
            client.assistants.update(aid, config={"configurable": settings}),
        ]
        details = []
        for attempt in sdk_attempts:
            with pytest.raises(httpx.HTTPStatusError) as caught:
                await attempt
            details.append(_detail(caught.value.response))
        run = {"assistant_id": "tool-mad", "input": claim}
        start = {"assistant_id": aid, "input": claim, "config": {"configurable": settings}}
        cron = {**run, "schedule": "* * * * *", "context": settings}
        rpc_params = {"name": "tool-mad", "arguments": claim, "context": settings}
        requests = [
            ("/runs/batch", [run, {**run, "context": settings}]),
            ("/runs/crons", cron),
            (f"/threads/{thread}/runs/crons", cron),
            (f"/threads/{thread}/commands", {"id": 1, "method": "run.start", "params": start}),
            ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": rpc_params}),
            (
                f"/a2a/{aid}",
                {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": rpc_params},
            ),
        ]
        headers = {"Accept": "application/json, text/event-stream"}
        for path, body in requests:
            details.append(_detail(await raw.post(path, json=body, headers=headers)))
        assert all(d.startswith(f"setting {name}=") for d in details), details
        assert all("is not allowed on this server" in d for d in details), details
        socket_thread = (await client.threads.create())["thread_id"]
        refused = await websocket_run_failure(url, socket_thread, start)
        assert refused == details[0]  # the graph's guard says the middleware's line
    await raw.aclose()
    crons = await client.crons.search()
    assert crons == []  # no cron was created
    ok = await client.runs.wait(None, "tool-mad", input=claim, context={"model": "scripted-server"})
    assert ok["verdict"] == "SUPPORTS"  # what the operator allowed still runs
    assert capture.received == [], capture.text()[:500]
    assert not target.parent.exists()


@pytest.mark.service
async def test_a_live_server_checks_an_assistant_named_by_id_like_a_named_graph(
    live: tuple[str, CaptureServer, Path],
):
    from langgraph_sdk import get_client

    url, _, _ = live
    client = get_client(url=url)
    aid = (await client.assistants.create("tool-mad"))["assistant_id"]
    claim = {"claim": "The Eiffel Tower is located in Paris."}
    for settings, words, configurable in [
        ({"max_rounds": "abc"}, "setting max_rounds must be an integer", True),
        ({"top_k": 0}, "setting top_k must be within 1..100", True),
        # config.configurable also carries the server's own keys: only context names settings
        ({"bogus": 1}, "unknown setting(s) for ToolMADContext: bogus", False),
    ]:
        attempts = [
            client.runs.wait(None, aid, input=claim, context=settings),
            client.assistants.update(aid, context=settings),
        ]
        if configurable:
            attempts.append(
                client.runs.create(None, aid, input=claim, config={"configurable": settings})
            )
        for attempt in attempts:
            with pytest.raises(httpx.HTTPStatusError) as caught:
                await attempt
            assert words in _detail(caught.value.response)


@pytest.mark.service
async def test_a_live_server_accepts_an_indexed_collection_and_refuses_an_unknown_one(
    live: tuple[str, CaptureServer, Path],
):
    """Under `langgraph dev` (blocking calls raise there) the collection look-up answers."""
    url, _, folder = live
    claim = {"claim": "The Eiffel Tower is located in Paris."}
    async with httpx.AsyncClient(base_url=url, timeout=COMMAND_GUARD_S) as raw:
        context = {"model": "scripted-server", "collection": "scifact"}
        done = await raw.post(
            "/runs/wait", json={"assistant_id": "tool-mad", "input": claim, "context": context}
        )
        assert done.status_code == 200, done.text[:500]
        assert done.json()["verdict"] == "SUPPORTS"
        unknown = {"model": "scripted-server", "collection": "never_indexed"}
        refused = await raw.post(
            "/runs/wait", json={"assistant_id": "tool-mad", "input": claim, "context": unknown}
        )
        assert "name a collection this server has indexed" in _detail(refused)
    assert "BlockingError" not in (folder / "server.log").read_text(errors="replace")


@pytest.mark.service
@pytest.mark.parametrize("path", ["/runs/wait", "/threads", "/store/items/search"])
async def test_a_live_server_answers_deeply_nested_json_with_a_422(
    live: tuple[str, CaptureServer, Path], path: str
):
    url, _, _ = live
    deep = b'{"assistant_id": "tool-mad", "metadata": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    async with httpx.AsyncClient(base_url=url, timeout=COMMAND_GUARD_S) as raw:
        response = await raw.post(path, content=deep, headers={"content-type": "application/json"})
    assert "nests deeper than" in _detail(response)


@pytest.mark.parametrize(("name", "value"), HOSTILE[:8])
@pytest.mark.parametrize(
    ("path", "method"),
    [("/mcp", "tools/call"), ("/a2a/a-uuid", "message/send"), ("/a2a/a-uuid", "message/stream")],
)
async def test_mcp_and_a2a_calls_cannot_name_hosts_or_paths(path: str, method: str, name, value):
    """MCP tool calls and A2A messages start runs with ``params.context`` too."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"name": "tool-mad", "arguments": {"claim": "x"}, "context": {name: value}},
    }
    response, downstream = await send("POST", path, message)
    assert response.status_code == 422, response.text
    assert f"setting {name}=" in response.json()["detail"]
    assert downstream.bodies == []
    allowed = {**message, "params": {**message["params"], "context": {"max_rounds": 2}}}
    response, downstream = await send("POST", path, allowed)
    assert response.status_code == 200 and downstream.bodies
