"""Every route the LangGraph server serves is classified: checked, guarded in the graph, or no run.

The server's own route table (the Starlette app langgraph-api builds with this project's
``http.app``) is read in a child process and compared with ``ROUTES``, an explicit list: a
route an upgrade adds, or one that changes method, fails here until someone decides whether
it can start or configure a run and, if so, which guard answers it. ``HARMFUL`` classifies,
besides, every route that deletes, deploys, schedules or sends data elsewhere as the
operator's (the auth handlers) or refused (the middleware); none may go unclassified.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Literal

import pytest

from factdebate.server.app import checks
from tests.bounded import COMMAND_GUARD_S, run_bounded
from tests.conftest import REPO

Kind = Literal["middleware", "in-graph", "no-run"]
MIDDLEWARE: Kind = "middleware"  # settings checked before a run exists, and again in the graph
IN_GRAPH: Kind = "in-graph"  # starts or resumes runs: the served graph's settings check only
NO_RUN: Kind = "no-run"  # neither starts a run nor sets a run's settings

ROUTES: dict[tuple[str, str], Kind] = {
    # runs, crons, assistants: their context/config.configurable are a run's settings
    ("POST", "/runs"): MIDDLEWARE,
    ("POST", "/runs/wait"): MIDDLEWARE,
    ("POST", "/runs/stream"): MIDDLEWARE,
    ("POST", "/runs/batch"): MIDDLEWARE,
    ("POST", "/runs/crons"): MIDDLEWARE,
    ("POST", "/threads/{thread_id}/runs"): MIDDLEWARE,
    ("POST", "/threads/{thread_id}/runs/wait"): MIDDLEWARE,
    ("POST", "/threads/{thread_id}/runs/stream"): MIDDLEWARE,
    ("POST", "/threads/{thread_id}/runs/crons"): MIDDLEWARE,
    ("PATCH", "/runs/crons/{cron_id}"): MIDDLEWARE,
    ("POST", "/assistants"): MIDDLEWARE,
    ("PATCH", "/assistants/{assistant_id}"): MIDDLEWARE,
    ("POST", "/threads/{thread_id}/commands"): MIDDLEWARE,  # v2 run.start, input.respond
    ("POST", "/mcp"): MIDDLEWARE,  # tools/call runs an assistant with params.context
    ("POST", "/a2a/{assistant_id}"): MIDDLEWARE,  # SendMessage, SendStreamingMessage
    ("POST", "/a2a/{assistant_id}/"): MIDDLEWARE,
    # protocol v2 over a WebSocket: run.start and input.respond in messages
    ("WS", "/threads/{thread_id}/stream/events"): IN_GRAPH,
    # an assistant version chosen again: its settings were checked when it was saved
    ("POST", "/assistants/{assistant_id}/latest"): IN_GRAPH,
    # reading, listing, deleting, joining, cancelling: no run starts, no settings change
    ("GET", "/assistants/{assistant_id}"): NO_RUN,
    ("DELETE", "/assistants/{assistant_id}"): NO_RUN,
    ("GET", "/assistants/{assistant_id}/graph"): NO_RUN,
    ("GET", "/assistants/{assistant_id}/schemas"): NO_RUN,
    ("GET", "/assistants/{assistant_id}/subgraphs"): NO_RUN,
    ("GET", "/assistants/{assistant_id}/subgraphs/{namespace}"): NO_RUN,
    ("POST", "/assistants/{assistant_id}/versions"): NO_RUN,
    ("POST", "/assistants/search"): NO_RUN,
    ("POST", "/assistants/count"): NO_RUN,
    ("POST", "/runs/cancel"): NO_RUN,
    ("POST", "/runs/crons/search"): NO_RUN,
    ("POST", "/runs/crons/count"): NO_RUN,
    ("GET", "/runs/crons/{cron_id}"): NO_RUN,
    ("DELETE", "/runs/crons/{cron_id}"): NO_RUN,
    ("GET", "/threads/{thread_id}/runs"): NO_RUN,
    ("GET", "/threads/{thread_id}/runs/{run_id}"): NO_RUN,
    ("DELETE", "/threads/{thread_id}/runs/{run_id}"): NO_RUN,
    ("GET", "/threads/{thread_id}/runs/{run_id}/join"): NO_RUN,
    ("GET", "/threads/{thread_id}/runs/{run_id}/stream"): NO_RUN,
    ("POST", "/threads/{thread_id}/runs/{run_id}/cancel"): NO_RUN,
    # threads: state writes go to the checkpoint without running a node
    ("POST", "/threads"): NO_RUN,
    ("POST", "/threads/search"): NO_RUN,
    ("POST", "/threads/count"): NO_RUN,
    ("POST", "/threads/prune"): NO_RUN,
    ("GET", "/threads/{thread_id}"): NO_RUN,
    ("PATCH", "/threads/{thread_id}"): NO_RUN,
    ("DELETE", "/threads/{thread_id}"): NO_RUN,
    ("GET", "/threads/{thread_id}/state"): NO_RUN,
    ("POST", "/threads/{thread_id}/state"): NO_RUN,
    ("GET", "/threads/{thread_id}/state/{checkpoint_id}"): NO_RUN,
    ("POST", "/threads/{thread_id}/state/checkpoint"): NO_RUN,
    ("GET", "/threads/{thread_id}/storage"): NO_RUN,
    ("GET", "/threads/{thread_id}/history"): NO_RUN,
    ("POST", "/threads/{thread_id}/history"): NO_RUN,
    ("POST", "/threads/{thread_id}/copy"): NO_RUN,
    ("GET", "/threads/{thread_id}/stream"): NO_RUN,
    ("POST", "/threads/{thread_id}/stream/events"): NO_RUN,  # event subscription (SSE)
    ("PUT", "/store/items"): NO_RUN,
    ("GET", "/store/items"): NO_RUN,
    ("DELETE", "/store/items"): NO_RUN,
    ("POST", "/store/items/search"): NO_RUN,
    ("POST", "/store/namespaces"): NO_RUN,
    ("POST", "/ui/{graph_id}"): NO_RUN,
    ("GET", "/mcp"): NO_RUN,
    ("DELETE", "/mcp"): NO_RUN,
    ("GET", "/a2a/{assistant_id}"): NO_RUN,
    ("DELETE", "/a2a/{assistant_id}"): NO_RUN,
    ("GET", "/a2a/{assistant_id}/"): NO_RUN,
    ("DELETE", "/a2a/{assistant_id}/"): NO_RUN,
    ("GET", "/a2a/{assistant_id}/.well-known/agent-card.json"): NO_RUN,
    ("GET", "/a2a/{assistant_id}/.well-known/agent.json"): NO_RUN,
    ("GET", "/.well-known/agent-card.json"): NO_RUN,
    # meta, docs, and the dev server's own routes (/deploy and /internal/*: HARMFUL, refused)
    ("GET", "/"): NO_RUN,
    ("GET", "/ok"): NO_RUN,
    ("GET", "/info"): NO_RUN,
    ("GET", "/metrics"): NO_RUN,
    ("GET", "/docs"): NO_RUN,
    ("GET", "/openapi.json"): NO_RUN,
    ("MOUNT", "/ui"): NO_RUN,  # static files
    ("POST", "/deploy"): NO_RUN,
    ("GET", "/deploy"): NO_RUN,
    ("GET", "/deploy/{operation_id}/stream"): NO_RUN,
    ("GET", "/internal/debug/thread/{thread_id}"): NO_RUN,
    ("POST", "/internal/truncate"): NO_RUN,
}

Harm = Literal["operator", "refused"]
OPERATOR: Harm = "operator"  # with keys, only the operator's key passes the auth handler
REFUSED: Harm = "refused"  # the middleware answers 403 whoever calls

HARMFUL: dict[tuple[str, str], Harm] = {
    # the dev server's own: a deploy with the operator's LangSmith key, a wipe, raw threads
    ("POST", "/deploy"): REFUSED,
    ("GET", "/deploy"): REFUSED,
    ("GET", "/deploy/{operation_id}/stream"): REFUSED,
    ("GET", "/internal/debug/thread/{thread_id}"): REFUSED,
    ("POST", "/internal/truncate"): REFUSED,
    # deletes (threads.delete, assistants.delete, crons.delete, store.delete handlers)
    ("DELETE", "/assistants/{assistant_id}"): OPERATOR,
    ("DELETE", "/runs/crons/{cron_id}"): OPERATOR,
    ("DELETE", "/threads/{thread_id}"): OPERATOR,
    ("DELETE", "/threads/{thread_id}/runs/{run_id}"): OPERATOR,
    ("POST", "/threads/prune"): OPERATOR,
    ("DELETE", "/store/items"): OPERATOR,
    # runs that come back on a schedule (crons.create, crons.update)
    ("POST", "/runs/crons"): OPERATOR,
    ("POST", "/threads/{thread_id}/runs/crons"): OPERATOR,
    ("PATCH", "/runs/crons/{cron_id}"): OPERATOR,
}
"""Routes that delete, deploy, send data elsewhere or run again unasked: none is harmless."""
_HARM_WORDS = re.compile(r"deploy|internal|truncate|prune|debug|trace|webhook|crons")
_SESSION_ONLY = {
    ("DELETE", "/mcp"),
    ("DELETE", "/a2a/{assistant_id}"),
    ("DELETE", "/a2a/{assistant_id}/"),
}
"""DELETEs that end a protocol session of the caller's own and delete nothing stored."""


def test_no_route_that_deletes_deploys_or_sends_elsewhere_is_classified_harmless():
    """A DELETE, or a path that deploys, wipes, traces or schedules, must be in HARMFUL."""
    harmful = {
        (method, path)
        for method, path in ROUTES
        if (method == "DELETE" and (method, path) not in _SESSION_ONLY)
        or _HARM_WORDS.search(path)
        and not (method in ("GET", "POST") and path.endswith(("/search", "/count")))
        and (method, path) != ("GET", "/runs/crons/{cron_id}")
    }
    unclassified = sorted(harmful - set(HARMFUL))
    assert not unclassified, f"routes that do harm classified harmless: {unclassified}"
    assert set(HARMFUL) <= set(ROUTES)


@pytest.mark.parametrize(
    ("method", "path"), sorted(k for k, harm in HARMFUL.items() if harm == REFUSED)
)
async def test_each_refused_route_is_answered_403_before_the_server(method: str, path: str):
    from tests.context_check import send

    response, downstream = await send(method, _concrete(path), {} if method == "POST" else None)
    assert response.status_code == 403, response.text
    assert "not served here" in response.json()["detail"]
    assert downstream.bodies == [] and downstream.looked_up == []


_WALK = r"""
import json, sys
from starlette.routing import Mount, WebSocketRoute

import langgraph_api.server as server

def walk(routes, prefix=""):
    for route in routes:
        if isinstance(route, Mount) and not route.routes:
            yield "MOUNT", prefix + route.path  # an app of its own (static files)
        elif isinstance(route, Mount):
            yield from walk(route.routes, prefix + route.path)
        elif isinstance(route, WebSocketRoute):
            yield "WS", prefix + route.path
        else:
            for method in sorted(getattr(route, "methods", None) or ["GET"]):
                if method != "HEAD":
                    yield method, prefix + route.path

json.dump(sorted(set(walk(server.app.routes))), sys.stdout)
"""


def dev_env() -> dict[str, str]:
    """The environment `langgraph dev` gives the server it imports (``langgraph_api.cli``)."""
    http = {"app": str(REPO / "factdebate" / "server" / "app.py") + ":app"}
    return {
        **os.environ,
        "MIGRATIONS_PATH": "__inmem",
        "DATABASE_URI": ":memory:",
        "REDIS_URI": "fake",
        "LANGGRAPH_RUNTIME_EDITION": "inmem",
        "LANGSMITH_LANGGRAPH_API_VARIANT": "local_dev",
        "LANGGRAPH_HTTP": json.dumps(http),
        "LANGGRAPH_API_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(REPO),
    }


def served_routes() -> set[tuple[str, str]]:
    """(method, WS or MOUNT; path) of every route `langgraph dev` serves with this app."""
    pytest.importorskip("langgraph_api", reason="langgraph-api is not installed")
    done = run_bounded(
        [sys.executable, "-c", _WALK],
        env=dev_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        what="the route-table walk",
        guard_s=COMMAND_GUARD_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {(method, path) for method, path in json.loads(done.stdout)}


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "0f6c3b2e-8d4a-4c1e-9a7b-3e5d2c1b0a99", path)


def test_every_served_route_is_classified():
    """A route the server gains or changes fails here until it is classified."""
    served = served_routes()
    new = sorted(served - set(ROUTES))
    gone = sorted(set(ROUTES) - served)
    assert not new, f"routes no guard has been decided for (classify them in ROUTES): {new}"
    assert not gone, f"ROUTES lists routes the server no longer has: {gone}"


@pytest.mark.parametrize(("method", "path"), sorted(ROUTES))
def test_the_middleware_checks_exactly_the_routes_classified_as_its_own(method: str, path: str):
    kind = ROUTES[(method, path)]
    assert checks(method, _concrete(path)) is (kind == MIDDLEWARE), (method, path, kind)


def test_runs_on_every_route_reach_the_in_graph_guard():
    """Every graph the server loads is a served one: any run, on any route, builds it checked."""
    import importlib.util

    from factdebate.graphs.registry import langgraph_graphs, served_graph
    from factdebate.nodes.policy import served

    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["http"]["app"] == "./factdebate/server/app.py:app"
    assert config["graphs"] == langgraph_graphs()
    spec = importlib.util.spec_from_file_location("served_check", REPO / "graphs" / "served.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # as the server loads it, by path
    for name, entry in config["graphs"].items():
        path, _, attr = entry["path"].partition(":")
        assert path == "./graphs/served.py", name
        graph = module.__dict__[attr]
        assert graph is served_graph(name), name
        assert graph.context_schema is served(graph.context_schema), name
