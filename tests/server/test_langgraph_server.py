"""LangGraph server: `langgraph dev` on 127.0.0.1 serves Tool-MAD to a langgraph_sdk client."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO


@pytest.mark.slow
async def test_server_runs_a_claim_with_the_scripted_model(server: str):
    from langgraph_sdk import get_client

    client = get_client(url=server)
    assistants = await client.assistants.search(graph_id="tool-mad")
    assert assistants, "tool-mad is not registered"
    graph_info = await client.assistants.get_graph(assistants[0]["assistant_id"])
    node_ids = {n["id"] for n in graph_info["nodes"]}
    assert {"consensus_check", "judge", "query_debater_a", "score_debater_b"} <= node_ids
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    context_schema = schemas.get("context_schema") or {}
    assert context_schema["properties"]["faithfulness_threshold"]["description"]

    result = await client.runs.wait(
        None,
        "tool-mad",
        input={"claim": "The Eiffel Tower is located in Paris."},
        context={"model": "scripted-server"},
    )
    assert result["verdict"] == "SUPPORTS"
    assert result["stop_reason"] == "consensus"
    assert result["rounds"] == 1
    assert {t["agent"] for t in result["transcript"]} == {"debater_a", "debater_b"}
    assert result["cost"]["total"]["llm_calls"] > 0


def test_langgraph_json_registers_every_method():
    """Studio and `langgraph dev` see each catalogued method under its own name."""
    from factdebate.graphs.registry import METHODS, langgraph_graphs

    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["graphs"] == langgraph_graphs(), "langgraph.json disagrees with the catalog"
    for name, entry in config["graphs"].items():
        path, _, attr = entry["path"].partition(":")
        assert entry["description"] == METHODS[name].tool_description, name
        assert (REPO / path).is_file(), name
        assert name in METHODS and attr == name.replace("-", "_"), name
