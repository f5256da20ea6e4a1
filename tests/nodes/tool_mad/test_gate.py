"""The stability gate's profiles and the documents the faithfulness judge reads, scripted models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, get_args

import pytest

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.gate import (
    MINILM,
    PAPER,
    PROFILES,
    SHIPPED_ENCODER,
    GateProfileName,
    gate_thresholds,
    profile_for,
)
from factdebate.prompts import tool_mad as prompts
from factdebate.tools import dispatch
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.records import Evidence
from factdebate.tools.retrieval.embeddings import DEFAULT_ENCODER
from tests.conftest import doc
from tests.fakes import ragas_rules

CLAIM = "The Bermuda Triangle is in the Himalayas."
# Written back from a refutation, this question sits at cosine 0.77 from the false claim under
# MiniLM: between the MiniLM profile's 0.63 and the paper's 0.8.
QUESTION = "Where is the Bermuda Triangle?"
ARGUE = "Decide whether the claim holds"
JUDGE = "You are the judge"
NLI = "NLIStatementOutput"


def rules(question: str = QUESTION) -> list[Any]:
    return [
        *ragas_rules(faithful=True, relevant_question=question),
        (JUDGE, "The documents place it in the Atlantic.\n**REFUTES**"),
        ("inside square brackets", "[Bermuda Triangle location]"),
        (ARGUE, "The Bermuda Triangle lies in the North Atlantic Ocean [2].\n**REFUTES**"),
    ]


@pytest.fixture
def two_docs() -> Iterator[None]:
    """Each tool returns two documents: the second is the one the debaters cite."""

    def tool(prefix: str) -> Any:
        def found(query: str, k: int) -> list[Evidence]:
            return [
                doc(f"{prefix}-1", "The Himalayas are a mountain range in Asia.", "Himalayas"),
                doc(f"{prefix}-2", "The Bermuda Triangle is in the North Atlantic.", "Bermuda"),
            ][:k]

        return found

    dispatch.override_tool("rag", tool("rag"))
    dispatch.override_tool("search", tool("web"))
    yield
    dispatch.override_tool("rag", None)
    dispatch.override_tool("search", None)


async def run(model: str, **settings: Any) -> dict[str, Any]:
    context = ToolMADContext(model=model, **settings)
    out: dict[str, Any] = await graph.ainvoke({"claim": CLAIM}, context=context)
    return out


async def test_refutation_between_the_profiles_stops_with_minilm_runs_on_with_paper(
    scripted: Any, two_docs: None
) -> None:
    name, model = scripted(rules())
    calibrated = await run(name)  # default: auto = the MiniLM profile
    assert calibrated["stop_reason"] == "consensus" and calibrated["rounds"] == 1
    assert calibrated["verdict"] == "REFUTES" and model.calls_with(JUDGE) == 0
    relevance = [t["answer_relevance"] for t in calibrated["transcript"]]
    assert all(MINILM.relevance < r < PAPER.relevance for r in relevance), relevance
    assert "gate profile minilm" in calibrated["decided_by"]["detail"]
    assert {t["relevance_encoder"] for t in calibrated["transcript"]} == {DEFAULT_ENCODER}

    name, model = scripted(rules())
    paper = await run(name, gate_profile="paper")
    assert paper["stop_reason"] == "round_limit" and paper["rounds"] == 3
    assert model.calls_with(JUDGE) == 1 and paper["verdict"] == "REFUTES"
    judge_prompt = next(p for p in model.prompts if JUDGE in p)
    assert "is below 0.80" in judge_prompt
    # Same verdict; the paper's relevance threshold costs two more rounds and the judge.
    calls = (calibrated["cost"]["total"]["llm_calls"], paper["cost"]["total"]["llm_calls"])
    assert calls[1] > 2 * calls[0]


async def test_an_explicit_threshold_overrides_the_profile(scripted: Any, two_docs: None) -> None:
    name, _ = scripted(rules())
    out = await run(name, relevance_threshold=0.8, max_rounds=1)  # the old setting still works
    assert out["stop_reason"] == "round_limit"
    name, _ = scripted(rules())
    out = await run(name, gate_profile="paper", relevance_threshold=0.7)
    assert out["stop_reason"] == "consensus"
    assert "gate profile paper, overridden" in out["decided_by"]["detail"]


async def test_the_faithfulness_judge_sees_the_debaters_document_numbers(
    scripted: Any, two_docs: None
) -> None:
    name, model = scripted(rules())
    await run(name, max_rounds=1)
    nli = [p for p in model.prompts if NLI in p]
    argue = [p for p in model.prompts if ARGUE in p]
    assert len(nli) == 2 and len(argue) == 2
    for tool in ("rag", "web"):
        block = f'<evidence n="2" id="{tool}-2" title="Bermuda">'
        (debater_prompt,) = [p for p in argue if f'id="{tool}-2"' in p]
        # RAGAS quotes the context as a JSON string: the same fenced, numbered block.
        (judge_prompt,) = [p for p in nli if json.dumps(block)[1:-1] in p]
        assert block in debater_prompt
        first = f'<evidence n="1" id="{tool}-1" title="Himalayas">'
        assert json.dumps(first)[1:-1] in judge_prompt and first in debater_prompt
        # Statements of silence, which the debater is asked for, are judged by one stated rule.
        assert "does not mention" in debater_prompt
        assert json.dumps(prompts.SILENCE_NOTE)[1:-1] in judge_prompt


def test_auto_picks_the_profile_of_the_relevance_encoder() -> None:
    assert SHIPPED_ENCODER == DEFAULT_ENCODER  # the light module's copy of the name
    assert profile_for("auto", DEFAULT_ENCODER) is MINILM
    assert profile_for("auto", "minilm") is MINILM
    assert profile_for("auto", "openai:text-embedding-3-small") is PAPER
    assert profile_for("auto", "intfloat/e5-small-v2") is PAPER  # no profile yet: the paper's
    assert profile_for("paper", DEFAULT_ENCODER) is PAPER
    assert set(PROFILES) == {"paper", "minilm"}
    assert set(get_args(GateProfileName)) == {"auto", *PROFILES}  # the setting names them all
    assert (PAPER.faithfulness, PAPER.relevance) == (0.7, 0.8)
    bounds = gate_thresholds("auto", DEFAULT_ENCODER, faithfulness=0.9)
    assert (bounds.faithfulness, bounds.relevance) == (0.9, MINILM.relevance)


def test_gate_settings_are_bounded() -> None:
    with pytest.raises(SettingsError):
        ToolMADContext(gate_profile="strict")  # type: ignore[arg-type]
    with pytest.raises(SettingsError):
        ToolMADContext(relevance_threshold=1.5)
    with pytest.raises(SettingsError):
        ToolMADContext(relevance_encoder="x" * 2000)
