"""Tool-MAD as the LangGraph server serves it, for tests: a scripted model and fixed documents."""

from __future__ import annotations

from typing import Any

from factdebate.graphs.registry import served_graph
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import override_tool
from factdebate.tools.models.providers import register_model
from tests.fakes import ScriptedChatModel, ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."


def scripted_rules() -> list[Any]:
    """The scripted server model's rules: both debaters find the claim supported, RAGAS agrees."""
    return [
        *ragas_rules(faithful=True, relevant_question=CLAIM),
        ("inside square brackets", "[Eiffel Tower]"),
        ("Decide whether the claim holds", "The document places it in Paris.\n**SUPPORTS**"),
    ]


register_model("scripted-server", ScriptedChatModel(rules=scripted_rules()))
for tool in ("rag", "search"):
    override_tool(
        tool,
        lambda q, k, t=tool: [
            Evidence(
                id=f"{t}-1",
                title="Eiffel Tower",
                text="The Eiffel Tower is in Paris.",
                source="fake",
                score=1.0,
            )
        ],
    )

graph = served_graph("tool-mad")  # as langgraph.json serves it: settings policy-checked

__all__ = ["graph"]
