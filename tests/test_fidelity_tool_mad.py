"""Tool-MAD paper fidelity: the judge reads every round's evidence in full."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphs.tool_mad import graph
from nodes.tool_mad.context import ToolMADContext
from tests.conftest import doc
from tests.fakes import ragas_rules
from tools import retrieval
from tools.records import Evidence

CLAIM = "The Eiffel Tower is located in Paris."
JUDGE_MARK = "You are the judge"
ARGUE_MARK = "Decide whether the claim holds"
# ~1,400 characters: far past the old 500-character cut, within max_doc_chars (2,000).
TAIL = "The decisive sentence: the tower was finished in 1889 on the Champ de Mars."
LONG_TEXT = "Background on the tower and its city. " * 35 + TAIL


@pytest.fixture
def long_tools() -> Iterator[None]:
    """RAG and search each return one long document whose last sentence matters."""

    def tool(name: str) -> Any:
        def run(query: str, k: int) -> list[Evidence]:
            return [doc(f"{name}-long", LONG_TEXT)][:k]

        return run

    retrieval.override_tool("rag", tool("rag"))
    retrieval.override_tool("search", tool("search"))
    yield
    retrieval.override_tool("rag", None)
    retrieval.override_tool("search", None)


async def test_judge_sees_each_rounds_evidence_in_full(scripted, long_tools):
    name, model = scripted(
        [
            *ragas_rules(),
            (JUDGE_MARK, "Weighed.\n**SUPPORTS**"),
            ("inside square brackets", "[Eiffel Tower]"),
            (lambda p: ARGUE_MARK in p and "local document collection" in p, "A.\n**SUPPORTS**"),
            (ARGUE_MARK, "B.\n**REFUTES**"),
        ]
    )
    out = await graph.ainvoke({"claim": CLAIM}, context=ToolMADContext(model=name, max_rounds=2))
    assert out["stop_reason"] == "round_limit"
    judge_prompt = next(p for p in model.prompts if JUDGE_MARK in p)
    # both debaters' documents of both rounds, each with its last sentence intact
    assert judge_prompt.count(TAIL) == 4
