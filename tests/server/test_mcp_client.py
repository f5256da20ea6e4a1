"""The server's `/mcp` through the official `mcp` client: progress, JSON results, one-line errors.

One `langgraph dev` for the module serves Tool-MAD on the scripted models of
tests/server/mcp_client_graph.py, behind the project's ``http.app``, which mounts
factdebate's own MCP endpoint (factdebate/server/mcp_endpoint.py) at ``/mcp``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from factdebate.graphs.registry import CONTRACT_KEYS, METHODS
from factdebate.nodes.review import NEEDS_THREAD
from factdebate.server.mcp_endpoint import DEFAULT_TOOLS, TOOLS_ENV, tool_names
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server.mcp_client_graph import DELAY_S
from tests.server_graph import CLAIM

mcp = pytest.importorskip("mcp", reason="the mcp SDK is not installed (pip install '.[dev]')")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 (the mcp SDK's HTTP client) is missing")

pytestmark = pytest.mark.service
READ_TIMEOUT_S = 6 * DELAY_S
"""The client's read timeout in the long-run test: a few model calls, far below the run's.

Between two finished steps a run makes at most two model calls (a debater's RAGAS scores)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanggraphDev]:
    graph = str(REPO / "tests" / "server" / "mcp_client_graph.py") + ":graph"
    dev = LanggraphDev(
        tmp_path_factory.mktemp("mcp-client"),
        {"tool-mad": graph},
        {"FACTDEBATE_MODEL": "scripted-server"},
    )
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


def client(server: LanggraphDev, read_timeout_s: float = COMMAND_GUARD_S) -> Any:
    """The official client on the server's `/mcp`, with its HTTP read timeout set."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(timeout=httpx2.Timeout(COMMAND_GUARD_S, read=read_timeout_s))
    return Client(streamable_http_client(f"{server.url}/mcp", http_client=http)), http


async def test_the_default_tools_are_described_from_the_catalog_with_both_schemas(
    server: LanggraphDev,
):
    mcp_client, http = client(server)
    async with http, mcp_client as session:
        listed = (await session.list_tools()).tools
    tools = {t.name: t for t in listed}
    assert tuple(tools) == DEFAULT_TOOLS  # no ablation, no run's private assistant
    for name, tool in tools.items():
        spec = METHODS[name]
        assert tool.description == spec.tool_description
        assert set(tool.output_schema["required"]) == set(CONTRACT_KEYS)
        assert set(spec.extras) <= set(tool.output_schema["properties"])
        assert tool.input_schema["required"], name  # every tool says what it needs
    assert tools["mad-fact"].input_schema["required"] == ["question", "answer"]
    assert "evidence" in tools["debate-cv"].input_schema["properties"]
    assert "evidence" not in tools["tool-mad"].input_schema["properties"]  # it takes a claim only
    assert '"evidence"' not in tools["tool-mad"].description  # promises no such key


def test_the_tool_list_is_one_setting_away():
    assert tool_names("") == DEFAULT_TOOLS
    assert tool_names("all") == tuple(METHODS)
    assert tool_names("cot, tool-mad-no-qf") == ("cot", "tool-mad-no-qf")
    with pytest.raises(ValueError, match=f"{TOOLS_ENV}: unknown method"):
        tool_names("cot,bench_tool-mad_79a8079a")


def test_every_methods_extras_are_what_its_graph_returns():
    from factdebate.api import METHOD_KEYS, output_keys
    from factdebate.graphs.registry import load_method

    for name, spec in METHODS.items():
        graph, _ = load_method(name)
        returned = output_keys(graph.builder) & set(METHOD_KEYS) - {"review", "proposed_verdict"}
        assert set(spec.extras) == returned, name
        inputs = set(graph.get_input_jsonschema()["properties"])
        assert (spec.given or None) == next(iter(inputs & {"evidence", "documents"}), None), name


async def test_a_run_longer_than_the_read_timeout_completes_with_progress(server: LanggraphDev):
    steps: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append((done, message))

    mcp_client, http = client(server)
    async with http, mcp_client as session:  # the server's first run loads its encoder
        assert not (await session.call_tool("tool-mad", {"claim": CLAIM})).is_error
    mcp_client, http = client(server, READ_TIMEOUT_S)
    async with http, mcp_client as session:
        result = await session.call_tool(
            "tool-mad",
            {"claim": CLAIM, "settings": {"model": "scripted-slow"}},
            progress_callback=progress,
        )
    assert not result.is_error, result.content
    calls = result.structured_content["cost"]["total"]["llm_calls"]
    assert calls * DELAY_S > 1.5 * READ_TIMEOUT_S  # the run outlasted the read timeout
    assert len(steps) >= 3 and [s[0] for s in steps] == sorted(s[0] for s in steps)
    assert any("finished" in (m or "") for _, m in steps)
    assert result.structured_content["verdict"] == "SUPPORTS"


async def test_a_call_answers_json_matching_its_output_schema(server: LanggraphDev):
    import jsonschema

    mcp_client, http = client(server)
    async with http, mcp_client as session:
        tool = {t.name: t for t in (await session.list_tools()).tools}["tool-mad"]
        result = await session.call_tool("tool-mad", {"claim": CLAIM})
    assert not result.is_error, result.content
    output = result.structured_content
    jsonschema.validate(output, tool.output_schema)
    assert json.loads(result.content[0].text) == output  # the text is JSON, not a literal
    assert output["verdict"] == "SUPPORTS" and output["stop_reason"] == "consensus"
    assert output["decided_by"]["agent"] and output["cost"]["total"]["llm_calls"] > 0
    assert "review" not in output and "proposed_verdict" not in output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "tool-mad needs 'claim': The claim to check."),
        ({"claim": "   "}, "the claim is empty"),
        ({"claim": CLAIM, "evidence": []}, "tool-mad takes no argument(s) evidence"),
        ({"claim": CLAIM, "settings": {"max_rounds": 0}}, "max_rounds"),
        ({"claim": CLAIM, "settings": {"colour": "red"}}, "colour"),
        ({"claim": CLAIM, "settings": {"review": True}}, NEEDS_THREAD),
        (
            {"claim": CLAIM, "settings": {"model": "openai:gpt-4o-mini@http://evil"}},
            "is not allowed on this server",
        ),
    ],
)
async def test_a_bad_call_is_answered_with_the_clis_one_line(
    server: LanggraphDev, arguments: dict[str, Any], message: str
):
    mcp_client, http = client(server)
    async with http, mcp_client as session:
        result = await session.call_tool("tool-mad", arguments)
    assert result.is_error
    (text,) = [c.text for c in result.content]
    assert message in text and "\n" not in text and not text.endswith("Error"), text


async def test_an_unknown_tool_names_the_tools(server: LanggraphDev):
    mcp_client, http = client(server)
    async with http, mcp_client as session:
        result = await session.call_tool("bench_tool-mad_79a8079a", {"claim": CLAIM})
    assert result.is_error and "unknown tool" in result.content[0].text
    assert "tool-mad" in result.content[0].text


async def test_a_caller_that_leaves_ends_its_run(server: LanggraphDev):
    import anyio

    started = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        started.set()

    mcp_client, http = client(server)
    async with http, mcp_client as session, anyio.create_task_group() as group:

        async def call() -> None:
            await session.call_tool(
                "tool-mad",
                {"claim": CLAIM, "settings": {"model": "scripted-slow"}},
                progress_callback=progress,
            )

        group.start_soon(call)
        with anyio.fail_after(COMMAND_GUARD_S):
            await started.wait()  # the run is going on
        group.cancel_scope.cancel()  # the caller leaves mid-run
    with anyio.fail_after(COMMAND_GUARD_S):
        while "on_disconnect=cancel" not in (server.folder / "server.log").read_text():
            await anyio.sleep(0.2)  # the server ends the run it started for the call
