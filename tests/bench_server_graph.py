"""Tool-MAD for the `bench --server` tests: the server test's scripted model, fixed documents.

``install()`` registers the models and the fixed retrieval in this process (the server calls it
on import; a test calls it for the local bench it compares with, and ``uninstall()`` after).
``scripted-bench-slow`` is the same model taking ``SLOW_S`` per call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from factdebate.graphs.tool_mad import graph
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import override_tool
from factdebate.tools.models.providers import register_model
from tests.fakes import ScriptedChatModel, ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."
SLOW_S = 0.1


def rules() -> list[Any]:
    return [
        *ragas_rules(faithful=True, relevant_question=CLAIM),
        ("inside square brackets", "[Eiffel Tower]"),
        ("Decide whether the claim holds", "The document places it in Paris.\n**SUPPORTS**"),
    ]


def slow(answer: Any) -> Callable[[str], str]:
    def reply(prompt: str) -> str:
        time.sleep(SLOW_S)
        return str(answer(prompt) if callable(answer) else answer)

    return reply


def documents(tool: str) -> Callable[[str, int], list[Evidence]]:
    def fetch(query: str, k: int) -> list[Evidence]:
        doc = Evidence(
            id=f"{tool}-1",
            title="Eiffel Tower",
            text="The Eiffel Tower is in Paris.",
            source="fake",
            score=1.0,
        )
        return [doc][:k]

    return fetch


def install() -> None:
    register_model("scripted-bench", ScriptedChatModel(rules=rules()))
    slow_rules = [(key, slow(answer)) for key, answer in rules()]
    register_model("scripted-bench-slow", ScriptedChatModel(rules=slow_rules))
    for tool in ("rag", "search"):
        override_tool(tool, documents(tool))


def uninstall() -> None:
    for tool in ("rag", "search"):
        override_tool(tool, None)


install()

__all__ = ["graph"]
