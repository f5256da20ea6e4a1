"""The server's `/mcp` offers every method as a tool described from the catalog, and runs one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from factdebate.graphs.registry import METHODS
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

pytestmark = pytest.mark.service

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanggraphDev]:
    """Every method as langgraph.json serves it; tool-mad on the scripted model (the default)."""
    graphs: Any = {
        spec.name: {
            "path": str(REPO / "graphs" / "served.py") + ":" + spec.name.replace("-", "_"),
            "description": spec.tool_description,
        }
        for spec in METHODS.values()
    }
    graphs["tool-mad"]["path"] = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(
        tmp_path_factory.mktemp("mcp"), graphs, {"FACTDEBATE_MODEL": "scripted-server"}
    )
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


def mcp(url: str, method: str, params: dict[str, Any], call_id: int = 1) -> dict[str, Any]:
    """One JSON-RPC call to the server's MCP endpoint (streamable HTTP, JSON answer)."""
    body = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
    answer = httpx.post(f"{url}/mcp", json=body, headers=MCP_HEADERS, timeout=COMMAND_GUARD_S)
    assert answer.status_code == 200, answer.text
    reply: dict[str, Any] = answer.json()
    assert "error" not in reply, reply
    return reply


def test_tools_list_describes_every_method_from_the_catalog(server: LanggraphDev):
    mcp(server.url, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    tools = {t["name"]: t for t in mcp(server.url, "tools/list", {}, 2)["result"]["tools"]}
    assert set(tools) == set(METHODS)
    for name, tool in tools.items():
        spec = METHODS[name]
        assert tool["description"] == spec.tool_description, name
        assert "Tool based on" not in tool["description"]
        assert PAPER_WORDS[spec.role] in tool["description"], name
        field = "claim" if spec.input_kind == "claim" else "question"
        assert field in tool["inputSchema"]["properties"], (name, tool["inputSchema"])


PAPER_WORDS = {"method": "The method of", "baseline": "A baseline", "ablation": "An ablation"}


def test_a2a_agent_card_says_the_same(server: LanggraphDev):
    found = httpx.post(f"{server.url}/assistants/search", json={"graph_id": "madam-rag"}).json()
    card = httpx.get(
        f"{server.url}/.well-known/agent-card.json",
        params={"assistant_id": found[0]["assistant_id"]},
    ).json()
    assert card["description"] == METHODS["madam-rag"].tool_description


def test_tools_call_returns_the_verdict_with_the_result_contract(server: LanggraphDev):
    reply = mcp(server.url, "tools/call", {"name": "tool-mad", "arguments": {"claim": CLAIM}}, 3)
    result = reply["result"]
    assert not result.get("isError"), result
    # LangGraph answers with the output's Python literal; the contract's keys and types hold.
    output = ast.literal_eval(result["content"][0]["text"])
    assert output["verdict"] == "SUPPORTS" and output["stop_reason"] == "consensus"
    assert output["decided_by"]["agent"] and output["justification"]
    assert output["cost"]["total"]["llm_calls"] > 0 and output["transcript"]
