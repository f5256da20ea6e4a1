"""Tool-MAD paper fidelity: the judge reads every round's evidence in full, each document once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.prompts.tool_mad import EVIDENCE_RULES, LABEL_INSTRUCTIONS, TOOL_DESCRIPTIONS
from factdebate.tools import dispatch
from factdebate.tools.core.records import Evidence
from tests.conftest import doc
from tests.fakes import ragas_rules

CLAIM = "The Eiffel Tower is located in Paris."
JUDGE_MARK = "You are the judge"
ARGUE_MARK = "Decide whether the claim holds"
# ~1,400 characters: far past a 500-character cut, within max_doc_chars (2,000).
TAIL = "The decisive sentence: the tower was finished in 1889 on the Champ de Mars."
LONG_TEXT = "Background on the tower and its city. " * 35 + TAIL


def use_long_tools(fresh: bool) -> None:
    """RAG and search each return one long document whose last sentence matters.

    ``fresh``: a new document (new id) on every search; otherwise the same one every round.
    """
    calls = iter(range(10**6))

    def tool(name: str) -> Any:
        def run(query: str, k: int) -> list[Evidence]:
            ident = f"{name}-long-{next(calls)}" if fresh else f"{name}-long"
            return [doc(ident, LONG_TEXT)][:k]

        return run

    dispatch.override_tool("rag", tool("rag"))
    dispatch.override_tool("search", tool("search"))


@pytest.fixture
def tools_reset() -> Iterator[None]:
    yield
    dispatch.override_tool("rag", None)
    dispatch.override_tool("search", None)


async def two_round_prompts(scripted: Any) -> list[str]:
    """Every prompt of a two-round debate where the debaters disagree, so the judge runs."""
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
    return [str(p) for p in model.prompts]


async def judge_prompt_of_two_rounds(scripted: Any) -> str:
    return next(p for p in await two_round_prompts(scripted) if JUDGE_MARK in p)


async def test_judge_sees_each_rounds_evidence_in_full(scripted, tools_reset):
    use_long_tools(fresh=True)
    judge_prompt = await judge_prompt_of_two_rounds(scripted)
    # both debaters' documents of both rounds, each with its last sentence intact
    assert judge_prompt.count(TAIL) == 4
    assert "not repeated" not in judge_prompt


async def test_a_document_retrieved_again_is_shown_to_the_judge_once(scripted, tools_reset):
    use_long_tools(fresh=False)
    judge_prompt = await judge_prompt_of_two_rounds(scripted)
    assert judge_prompt.count(TAIL) == 2  # rag-long and search-long, from round 1
    history = judge_prompt.split("Debate history")[1]
    round_2 = history[history.index("Round 2, debater_a") :]
    assert TAIL not in round_2
    # each repeat names where the text was shown, and every round's answer is still there
    for agent in ("debater_a", "debater_b"):
        pointer = f"(the same document as round 1, {agent} document [1]; not repeated)"
        assert round_2.count(pointer) == 1
    assert history.count("Answer: A.") == 2 and history.count("Answer: B.") == 2


async def test_every_argument_prompt_opens_with_the_same_rules(scripted, tools_reset):
    """Both debaters' turns of every round share their opening, up to the label format.

    llama.cpp's prefix cache evaluates that opening once per debate; what differs (tool,
    task, claim, opponent's answer, documents) comes after it.
    """
    use_long_tools(fresh=True)
    prompts = await two_round_prompts(scripted)
    argue = [p for p in prompts if ARGUE_MARK in p and JUDGE_MARK not in p]
    assert len(argue) == 4  # 2 debaters x 2 rounds
    shared = os.path.commonprefix(argue)
    assert LABEL_INSTRUCTIONS in shared and EVIDENCE_RULES in shared
    assert all(tool not in shared for tool in TOOL_DESCRIPTIONS.values())
    assert "Claim:" not in shared and '<evidence n="' not in shared


async def test_a_later_turn_with_the_same_documents_extends_the_last_prompt(scripted, tools_reset):
    """A debater whose query brings back the same documents resumes its previous prompt.

    The later turn is the earlier prompt plus the opponent's answer and a closing line, so a
    prefix cache evaluates only those; with new documents the prompts part at the documents.
    """
    for fresh in (False, True):
        use_long_tools(fresh=fresh)
        argue = [p for p in await two_round_prompts(scripted) if ARGUE_MARK in p]
        for tool in ("rag", "search"):
            first, second = [p for p in argue if TOOL_DESCRIPTIONS[tool] in p]
            if fresh:
                shared = os.path.commonprefix([first, second])
                assert f"Claim: {CLAIM}" in shared and TAIL not in shared
            else:
                assert second.startswith(first)
                added = second[len(first) :]
                assert added.startswith("\n\nOther agent's answer in the previous round: ")
                assert ("B." if tool == "rag" else "A.") in added  # the opponent's answer
