"""Every method as langgraph.json serves it: its assistant and A2A card use the catalog's words.

The MCP tools themselves (factdebate/server/mcp_endpoint.py) are tested with the official
client in tests/server/test_mcp_client.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from factdebate.graphs.registry import METHODS
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev

pytestmark = pytest.mark.service


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


def test_a2a_agent_card_says_the_same(server: LanggraphDev):
    found = httpx.post(f"{server.url}/assistants/search", json={"graph_id": "madam-rag"}).json()
    card = httpx.get(
        f"{server.url}/.well-known/agent-card.json",
        params={"assistant_id": found[0]["assistant_id"]},
    ).json()
    assert card["description"] == METHODS["madam-rag"].tool_description


def test_every_assistant_is_described_from_the_catalog(server: LanggraphDev):
    found = httpx.post(f"{server.url}/assistants/search", json={"limit": 100}).json()
    described = {a["graph_id"]: a.get("description") for a in found}
    assert set(described) == set(METHODS)
    for name, spec in METHODS.items():
        assert described[name] == spec.tool_description, name
        assert PAPER_WORDS[spec.role] in spec.tool_description, name


PAPER_WORDS = {"method": "The method of", "baseline": "A baseline", "ablation": "An ablation"}
