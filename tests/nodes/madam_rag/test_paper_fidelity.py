"""MADAM-RAG paper fidelity: strict EM on real RAMDocs items, round input, aggregator, waves."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from factdebate.datasets import DatasetError, QAItem, load_ramdocs
from factdebate.graphs.madam_rag import graph
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.tools.core.records import Evidence
from factdebate.tools.scoring.answers import answer_includes, answer_scores
from tests.conftest import doc
from tests.fakes import ScriptedChatModel

# --------------------------------------------------------------------------- strict EM


@pytest.fixture(scope="module")
def ramdocs() -> dict[str, QAItem]:
    try:
        loaded = load_ramdocs()
    except DatasetError as exc:
        pytest.skip(f"RAMDocs not available: {exc}")
    return {item.id: item for item in loaded.items}


def em(item: QAItem, predicted: list[str]) -> float:
    return answer_scores(predicted, item.gold_answers, item.wrong_answers)["exact_match"]


def test_a_longer_date_includes_the_gold_year(ramdocs: dict[str, QAItem]) -> None:
    marina = ramdocs["351"]  # gold 1963 / 1964 to 1982 / 2006, wrong 1985 / 1955
    assert marina.gold_answers == ["1963", "1964 to 1982", "2006"]
    assert em(marina, ["February 17, 1963", "1964 to 1982", "2006"]) == 1.0
    assert em(marina, ["February 17, 1963", "from 1964 to 1982", "in 2006"]) == 1.0
    assert em(marina, ["February 17, 1963", "1964 to 1982", "2006", "1955"]) == 0.0
    assert em(marina, ["1963", "1964", "2006"]) == 0.0  # "1964" does not include the range


def test_a_number_with_another_unit_noun_includes_the_gold(ramdocs: dict[str, QAItem]) -> None:
    broken_bow = ramdocs["0"]  # gold "3,559 people", wrong "10,000 people"
    assert broken_bow.gold_answers == ["3,559 people"]
    assert em(broken_bow, ["approximately 3,559 residents"]) == 1.0
    assert em(broken_bow, ["approximately 3,559 residents", "about 10,000 inhabitants"]) == 0.0
    assert em(broken_bow, ["3,560 residents"]) == 0.0


def test_a_bare_year_does_not_include_a_full_date(ramdocs: dict[str, QAItem]) -> None:
    dunville = ramdocs["200"]  # gold "1900" and "June 11, 1963"
    assert em(dunville, ["1900", "11 June 1963"]) == 1.0
    assert em(dunville, ["1900", "1963"]) == 0.0
    assert em(dunville, ["1900", "July 11, 1963"]) == 0.0


@pytest.mark.parametrize(
    ("output", "gold", "included"),
    [
        ("February 17, 1963", "1963", True),
        ("approximately 3,559 residents", "3,559 people", True),
        ("1963", "June 11, 1963", False),
        ("2 billion people", "2 million people", False),
        ("Mahesh Bhatt", "Bhatt", True),
        ("New Orleans, Louisiana", "Cloutierville, Louisiana", False),
    ],
)
def test_answer_includes(output: str, gold: str, included: bool) -> None:
    assert answer_includes(output, gold) is included


# --------------------------------------------------------------------------- the debate

QUESTION = "In which year was Michael Jordan born?"
AGENT_MARK = "You are one of several agents"
AGG_MARK = "You combine the answers of several agents"
NBA = doc("jordan-nba", "Michael Jeffrey Jordan, the basketball player, was born in 1963.")
PROF = doc("jordan-prof", "Michael Irwin Jordan, the Berkeley professor, was born in 1956.")


def agent_json(answer: str, explanation: str) -> str:
    return json.dumps({"answer": answer, "explanation": explanation})


def madam_rules() -> list[Any]:
    return [
        (AGG_MARK, json.dumps({"answers": ["1963", "1956"], "explanation": "AGG-SUMMARY"})),
        ("basketball player", agent_json("1963", "NBA-REASON")),
        ("Berkeley professor", agent_json("1956", "PROF-REASON")),
    ]


async def run(model: str, docs: list[Evidence], **settings: Any) -> dict[str, Any]:
    return await graph.ainvoke(
        {"question": QUESTION, "documents": docs}, context=MadamContext(model=model, **settings)
    )


def round_two_prompt(model: ScriptedChatModel, marker: str) -> str:
    agent_prompts = [p for p in model.prompts if AGENT_MARK in p]
    return next(p for p in agent_prompts[2:] if marker in p)


async def test_round_two_sees_the_other_agents_by_default(scripted):
    name, model = scripted(madam_rules())
    out = await run(name, [NBA, PROF], max_rounds=2)
    assert out["rounds"] == 2
    nba_prompt = round_two_prompt(model, "basketball player")
    assert "agent_2: answer: 1956. Explanation: PROF-REASON" in nba_prompt
    assert "NBA-REASON" not in nba_prompt  # the others, not itself
    assert "AGG-SUMMARY" not in nba_prompt
    prof_prompt = round_two_prompt(model, "Berkeley professor")
    assert "agent_1: answer: 1963. Explanation: NBA-REASON" in prof_prompt


async def test_round_two_sees_the_aggregator_when_asked(scripted):
    name, model = scripted(madam_rules())
    await run(name, [NBA, PROF], max_rounds=2, round_input="aggregator")
    nba_prompt = round_two_prompt(model, "basketball player")
    assert "AGG-SUMMARY" in nba_prompt and "PROF-REASON" not in nba_prompt


@pytest.mark.parametrize("round_input", ["agents", "aggregator"])
async def test_no_keep_your_answer_nudge(scripted, round_input):
    name, model = scripted(madam_rules())
    await run(name, [NBA, PROF], max_rounds=2, round_input=round_input)
    later = [p for p in model.prompts if AGENT_MARK in p][2:]
    assert later
    for prompt in later:
        assert "keep your answer" not in prompt.lower()
        assert "even if others" not in prompt.lower()


async def test_aggregator_has_a_worked_example_and_lists_all_answers(scripted):
    name, model = scripted(madam_rules())
    out = await run(name, [NBA, PROF], max_rounds=1, seed=3)
    prompt = next(p for p in model.prompts if AGG_MARK in p)
    example, _, real = prompt.partition("Question: " + QUESTION)
    assert "worked example" in example and '["1636", "1821"]' in example
    assert "list every\ncorrect answer" in example or "every correct answer" in " ".join(
        example.split()
    )
    assert "NBA-REASON" in real and "PROF-REASON" in real  # answers with explanations
    assert out["answers"] == ["1963", "1956"] and out["justification"] == "AGG-SUMMARY"


def test_round_input_is_checked():
    with pytest.raises(ValueError, match="round_input"):
        MadamContext(round_input="both")  # type: ignore[arg-type]


async def test_a_ramdocs_sized_question_runs_in_one_wave(scripted):
    lock = threading.Lock()
    load = {"now": 0, "peak": 0}

    def slow_agent(prompt: str) -> str:
        with lock:
            load["now"] += 1
            load["peak"] = max(load["peak"], load["now"])
        time.sleep(0.2)
        with lock:
            load["now"] -= 1
        return agent_json("42", "The document says 42.")

    name, model = scripted(
        [(AGG_MARK, json.dumps({"answers": ["42"], "explanation": "x"})), (AGENT_MARK, slow_agent)]
    )
    docs = [doc(f"d{i}", f"Fact sheet {i}: the answer is 42.") for i in range(12)]
    out = await run(name, docs, max_rounds=1)  # RAMDocs has up to 12 documents a question
    assert len([t for t in out["transcript"] if "document_id" in t]) == 12
    # the default cap does not bind at 12 documents; the peak is then bounded by the thread pool
    # the scripted model runs in (at least 5 workers), not by MADAM-RAG
    assert MadamContext().max_concurrency >= 12
    assert load["peak"] >= 5
