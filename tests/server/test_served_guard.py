"""The in-graph guard: a served graph refuses a client-named host or path when a run starts.

Every graph ``langgraph.json`` serves builds its settings with ``served(cls)``, so the
operator policy runs where LangGraph builds a run's settings, before any node, whatever route
started the run. In process here; tests/server/test_served_guard_live.py runs a server.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from factdebate.graphs.registry import METHODS, context_class, served_graph
from factdebate.nodes.policy import collection_indexed, served
from factdebate.tools.core.errors import SettingsError
from tests.bounded import COMMAND_GUARD_S
from tests.capture_server import CaptureServer, capture_server
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev, websocket_run_failure

CLAIM = {"claim": "The Eiffel Tower is located in Paris."}


@pytest.fixture(autouse=True)
def operator_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No allow-lists, an empty data home: only the defaults are the operator's."""
    for name in list(os.environ):
        if name.startswith("FACTDEBATE_SERVED_") or name.endswith("_MODEL"):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("FACTDEBATE_HOME", str(home))
    return home


def test_every_served_graph_builds_its_settings_through_the_policy():
    for name in METHODS:
        graph = served_graph(name)
        plain = context_class(name)
        assert graph.context_schema is served(plain), name
        assert issubclass(graph.context_schema, plain), name
        # Studio's settings form and the server's context filter read the same schema
        assert graph.get_context_jsonschema() == METHODS[name].load_graph().get_context_jsonschema()


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("model", "openai-compatible:m@{url}/v1", "name a model listed in"),
        ("judge_model", "hf-local:{path}", "name a model listed in"),
        ("milvus_uri", "{url}", "name a Milvus URI listed in"),
        ("milvus_uri", "{path}/milvus.db", "name a Milvus URI listed in"),
        ("rerank_model", "{path}", "name an encoder listed in"),
        ("collection", "never_indexed", "name a collection this server has indexed"),
    ],
)
async def test_a_served_run_with_a_client_named_host_or_path_stops_before_any_node(
    tmp_path: Path, name: str, value: str, words: str
):
    target = tmp_path / "client-chosen"
    with capture_server() as capture:
        given = value.format(url=capture.url, path=target)
        with pytest.raises(SettingsError) as caught:
            await served_graph("tool-mad").ainvoke(CLAIM, context={name: given})
        seen = capture.received
    message = str(caught.value)
    assert message.startswith(f"setting {name}=") and words in message
    assert "\n" not in message
    assert seen == []
    assert not target.exists()


def test_the_operator_builds_any_setting_and_allowed_values_pass_for_clients(
    operator_env: Path, monkeypatch: pytest.MonkeyPatch
):
    """The CLI and the API build the plain class; a served one takes what the operator listed."""
    plain, guarded = context_class("tool-mad"), served(context_class("tool-mad"))
    anywhere = {"model": "openai-compatible:m@http://127.0.0.1:9/v1", "milvus_uri": "/x/m.db"}
    assert plain(**anywhere).milvus_uri == "/x/m.db"
    with pytest.raises(SettingsError):
        guarded(**anywhere)
    monkeypatch.setenv("FACTDEBATE_SERVED_MODELS", anywhere["model"])
    monkeypatch.setenv("FACTDEBATE_SERVED_MILVUS_URIS", "/x/m.db")
    monkeypatch.setenv("FACTDEBATE_MODEL", "openai:gpt-4o-mini")  # the operator's default
    assert guarded(**anywhere).model == anywhere["model"]
    assert guarded().model == "openai:gpt-4o-mini"
    assert isinstance(guarded(), plain) and served(guarded) is guarded


def test_an_indexed_collection_is_found_without_creating_the_home(operator_env: Path):
    guarded = served(context_class("cot"))
    assert not collection_indexed("scifact")
    assert not operator_env.exists()  # looking did not create the data home
    (operator_env / "manifests").mkdir(parents=True)
    (operator_env / "manifests" / "scifact.json").write_text("{}")
    assert guarded(collection="scifact").collection == "scifact"
    assert not collection_indexed("../etc/passwd")
    with pytest.raises(SettingsError, match="collection"):
        guarded(collection="../manifests/scifact")


def test_the_capture_server_records_a_milvus_grpc_connection():
    """So a capture server named as ``milvus_uri`` that records nothing was never reached."""
    pymilvus = pytest.importorskip("pymilvus", reason="pymilvus is not installed")
    with capture_server() as capture:
        with pytest.raises(Exception):  # noqa: B017 - it answers no gRPC
            pymilvus.MilvusClient(uri=capture.url, token=MILVUS_TOKEN, timeout=3)
        seen = capture.received
    assert seen and seen[0].startswith(b"PRI * HTTP/2.0")


# A live `langgraph dev` serving the guarded graph WITHOUT the project's middleware: what the
# in-graph guard alone does on every route that starts a run, including those the middleware
# would answer first.

KEY = "sk-operator-SECRET-4711"
MILVUS_TOKEN = "root:operator-SECRET-0815"
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, CaptureServer]]:
    """`langgraph dev` (no http.app) with the operator's keys, and a capture server."""
    folder = tmp_path_factory.mktemp("bare-langgraph-dev")
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    env = {"OPENAI_API_KEY": KEY, "FACTDEBATE_MILVUS_TOKEN": MILVUS_TOKEN}
    with capture_server() as capture:
        dev = LanggraphDev(folder, {"tool-mad": graph}, env=env, middleware=False)
        dev.start()
        try:
            yield dev.url, capture
        finally:
            dev.stop()


def _refused(result: Any) -> str:
    """The one-line reason a run's result (``__error__`` of a join or a wait) carries."""
    assert isinstance(result, dict) and "__error__" in result, str(result)[:300]
    error = result["__error__"]
    assert error["error"] == "SettingsError", error
    message = str(error["message"])
    assert "\n" not in message and "is not allowed on this server" in message, message
    return message


def _join(client: httpx.Client, thread: str, run: str) -> Any:
    return client.get(f"/threads/{thread}/runs/{run}/join", timeout=COMMAND_GUARD_S).json()


@pytest.mark.service
async def test_without_the_middleware_every_route_is_refused_by_the_served_graph(
    bare_server: tuple[str, CaptureServer], tmp_path: Path
):
    """Runs, waits, batches, v2 commands, the WebSocket, MCP, A2A, crons, assistants by id."""
    url, capture = bare_server
    target = tmp_path / "client-chosen"
    hostile = [
        {"model": f"openai-compatible:m@{capture.url}/v1"},
        {"judge_model": f"hf-local:{target}"},
        {"milvus_uri": capture.url},  # a gRPC client's HTTP/2 preface is captured too
        {"milvus_uri": str(target / "milvus.db")},
        {"collection": "never_indexed"},
    ]
    client = httpx.Client(base_url=url, timeout=COMMAND_GUARD_S)
    new_thread = lambda: client.post("/threads", json={}).json()["thread_id"]  # noqa: E731
    # a cron fires at the next minute: created first, its run checked last
    cron_thread = new_thread()
    cron = client.post(
        f"/threads/{cron_thread}/runs/crons",
        json={
            "assistant_id": "tool-mad",
            "schedule": "* * * * *",
            "input": CLAIM,
            "context": hostile[0],
        },
    )
    assert cron.status_code == 200, cron.text
    for settings in hostile:
        reasons = []
        run = {"assistant_id": "tool-mad", "input": CLAIM}
        reasons.append(
            _refused(client.post("/runs/wait", json={**run, "context": settings}).json())
        )
        thread = new_thread()
        configured = {**run, "config": {"configurable": settings}}
        waited = client.post(f"/threads/{thread}/runs/wait", json=configured).json()
        reasons.append(_refused(waited))
        batch = client.post(
            "/runs/batch", json=[{**run, "context": settings, "on_completion": "keep"}]
        )
        first = batch.json()[0]
        reasons.append(_refused(_join(client, first["thread_id"], first["run_id"])))
        thread = new_thread()
        command = {"id": 1, "method": "run.start", "params": configured}
        started = client.post(f"/threads/{thread}/commands", json=command).json()
        reasons.append(_refused(_join(client, thread, started["result"]["run_id"])))
        reasons.append(await websocket_run_failure(url, new_thread(), configured))
        assistant = client.post(
            "/assistants", json={"graph_id": "tool-mad", "context": settings}
        ).json()
        by_id = {"assistant_id": assistant["assistant_id"], "input": CLAIM}
        reasons.append(_refused(client.post("/runs/wait", json=by_id).json()))
        name = f"hostile-{len(reasons)}-{abs(hash(str(settings)))}"
        client.patch(f"/assistants/{assistant['assistant_id']}", json={"name": name})
        call = {"name": name, "arguments": CLAIM, "context": settings}
        mcp = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
            headers=ACCEPT,
        ).json()
        assert mcp["result"]["isError"] and "SettingsError" in str(mcp["result"]), mcp
        message = {"role": "user", "messageId": name, "parts": [{"kind": "data", "data": CLAIM}]}
        a2a = client.post(
            f"/a2a/{assistant['assistant_id']}",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {"message": message, "context": settings},
            },
            headers=ACCEPT,
        ).json()
        task = a2a["result"]
        assert task["status"]["state"] == "failed", task
        thread, _, run_id = task["id"].partition(":")
        reasons.append(_refused(_join(client, thread, run_id)))
        (key,) = settings
        assert all(reason.startswith(f"setting {key}=") for reason in reasons), reasons
        assert len(set(reasons)) == 1, reasons  # the same line, whatever the route
    deadline = time.monotonic() + COMMAND_GUARD_S
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not runs:
        runs = [
            r
            for r in client.get(f"/threads/{cron_thread}/runs").json()
            if r["status"] in ("error", "success")
        ]
        time.sleep(2)
    assert runs and runs[0]["status"] == "error", runs
    assert _refused(_join(client, cron_thread, runs[0]["run_id"])).startswith("setting model=")
    assert capture.received == [], capture.text()[:500]
    assert not target.exists()
    ok = client.post(
        "/runs/wait",
        json={"assistant_id": "tool-mad", "input": CLAIM, "context": {"model": "scripted-server"}},
    ).json()
    assert ok["verdict"] == "SUPPORTS"  # what the operator allowed still runs
