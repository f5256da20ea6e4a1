"""MADAM-RAG and its baselines driven by scripted models: every branch, plus one real run."""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from factdebate.graphs.madam_concat_rag import graph as concat_graph
from factdebate.graphs.madam_no_rag import graph as no_rag_graph
from factdebate.graphs.madam_rag import graph
from factdebate.graphs.madam_self_reflect import graph as reflect_graph
from factdebate.graphs.registry import METHODS, load_method
from factdebate.nodes.claims import InputError
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.tools import dispatch
from factdebate.tools.core.records import Evidence
from factdebate.tools.scoring.answers import answer_scores
from tests.conftest import doc

QUESTION = "In which year was Michael Jordan born?"
AGENT_MARK = "You are one of several agents"
AGG_MARK = "You combine the answers of several agents"
PREV_MARK = "In the last round an aggregator"
NBA = doc("jordan-nba", "Michael Jeffrey Jordan, the basketball player, was born in 1963.")
PROF = doc("jordan-prof", "Michael Irwin Jordan, the Berkeley professor, was born in 1956.")
FAKE = doc("jordan-fake", "Michael Jordan was born in 1998 in Brooklyn.")
NBA2 = doc("jordan-nba-2", "Jordan, a Chicago Bulls basketball player, was born in 1963.")
GARBLED = doc("jordan-garbled", "Jordan garbled page with a birth year somewhere.")


def agent_json(answer: str, explanation: str = "My document states it.") -> str:
    return json.dumps({"answer": answer, "explanation": explanation})


def aggregator_keeping(drop: tuple[str, ...] = ()) -> Callable[[str], str]:
    """A scripted aggregator: keeps every distinct agent answer it is shown, except ``drop``."""

    def reply(prompt: str) -> str:
        shown = re.findall(r"\): answer: (.*?)\. Explanation:", prompt)
        kept = [a for a in dict.fromkeys(shown) if a not in drop and a.lower() != "unknown"]
        return json.dumps({"answers": kept, "explanation": f"Kept {kept}; dropped {list(drop)}."})

    return reply


def jordan_rules(drop: tuple[str, ...] = ()) -> list[Any]:
    return [
        (AGG_MARK, aggregator_keeping(drop)),
        ("basketball player", agent_json("1963")),
        ("Berkeley professor", agent_json("1956")),
        ("born in 1998", agent_json("1998", "My document gives 1998.")),
        ("garbled page", "I believe it is 1963, honestly."),
    ]


async def run(model: str, docs: list[Evidence] | None, **settings: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"question": QUESTION}
    if docs is not None:
        payload["documents"] = docs
    return await graph.ainvoke(payload, context=MadamContext(model=model, **settings))


def agents_of(out: dict[str, Any], round_no: int) -> dict[str, dict[str, Any]]:
    return {
        t["agent"]: t for t in out["transcript"] if t["round"] == round_no and "document_id" in t
    }


def aggregator_of(out: dict[str, Any], round_no: int) -> dict[str, Any]:
    return next(
        t for t in out["transcript"] if t["round"] == round_no and t["agent"] == "aggregator"
    )


# --------------------------------------------------------------------------- MADAM-RAG


async def test_ambiguity_two_valid_answers_both_survive(scripted):
    name, model = scripted(jordan_rules())
    out = await run(name, [NBA, PROF])
    assert out["answers"] == ["1963", "1956"] or out["answers"] == ["1956", "1963"]
    assert set(out["verdict"].split("; ")) == {"1963", "1956"}
    assert out["stop_reason"] == "answers_stable"
    assert out["rounds"] == 2
    first = agents_of(out, 1)
    assert {a: t["document_id"] for a, t in first.items()} == {
        "agent_1": "jordan-nba",
        "agent_2": "jordan-prof",
    }
    assert [e["id"] for e in first["agent_1"]["evidence"]] == ["jordan-nba"]
    assert first["agent_2"]["answer"] == "1956"
    assert out["errors"] == []
    assert answer_scores(out["answers"], ["1963", "1956"], ["1998"])["exact_match"] == 1.0


async def test_each_agent_sees_only_its_own_document(scripted):
    name, model = scripted(jordan_rules(drop=("1998",)))
    await run(name, [NBA, PROF, FAKE], max_rounds=1)
    agent_prompts = [p for p in model.prompts if AGENT_MARK in p]
    assert len(agent_prompts) == 3
    for prompt in agent_prompts:
        seen = [d["id"] for d in (NBA, PROF, FAKE) if d["text"] in prompt]
        assert len(seen) == 1, seen


async def test_misinformation_lone_wrong_agent_is_dropped(scripted):
    name, model = scripted(jordan_rules(drop=("1998",)))
    out = await run(name, [NBA, FAKE, NBA2])
    assert out["answers"] == ["1963"]
    assert out["verdict"] == "1963"
    fake_turn = agents_of(out, 1)["agent_2"]
    assert (fake_turn["document_id"], fake_turn["answer"]) == ("jordan-fake", "1998")
    agg_prompt = next(p for p in model.prompts if AGG_MARK in p)
    assert "answer: 1998." in agg_prompt  # the aggregator saw it, and dropped it
    assert answer_scores(out["answers"], ["1963"], ["1998"]) == {
        "exact_match": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }


async def test_early_stop_at_round_two_when_answers_repeat(scripted):
    name, model = scripted(jordan_rules())
    out = await run(name, [NBA, PROF], max_rounds=3, round_input="aggregator")
    assert (out["stop_reason"], out["rounds"]) == ("answers_stable", 2)
    assert model.calls_with(AGENT_MARK) == 4
    assert model.calls_with(AGG_MARK) == 2
    round_one = [p for p in model.prompts if AGENT_MARK in p][:2]
    round_two = [p for p in model.prompts if AGENT_MARK in p][2:]
    assert all(PREV_MARK not in p for p in round_one)
    for prompt in round_two:
        assert PREV_MARK in prompt
        assert "Answers: 1963; 1956" in prompt or "Answers: 1956; 1963" in prompt
        assert "Kept [" in prompt  # the aggregator's explanation is passed on
    assert out["cost"]["agent"]["llm_calls"] == 4
    assert out["cost"]["aggregator"]["llm_calls"] == 2
    assert out["cost"]["total"]["input_tokens"] > 0


async def test_round_limit_when_an_agent_keeps_changing(scripted):
    counter = itertools.count(1)
    rules = [
        (AGG_MARK, aggregator_keeping()),
        ("basketball player", agent_json("1963")),
        ("Berkeley professor", lambda p: agent_json(f"195{next(counter)}")),
    ]
    name, model = scripted(rules)
    out = await run(name, [NBA, PROF], max_rounds=3)
    assert (out["stop_reason"], out["rounds"]) == ("round_limit", 3)
    assert [agents_of(out, r)["agent_2"]["answer"] for r in (1, 2, 3)] == ["1951", "1952", "1953"]
    assert set(out["answers"]) == {"1963", "1953"}
    assert model.calls_with(AGG_MARK) == 3


async def test_one_round_limit(scripted):
    name, model = scripted(jordan_rules())
    out = await run(name, [NBA], max_rounds=1)
    assert (out["stop_reason"], out["rounds"], out["answers"]) == ("round_limit", 1, ["1963"])


async def test_unparseable_agent_is_recorded_and_the_others_proceed(scripted):
    name, model = scripted(jordan_rules())
    out = await run(name, [NBA, GARBLED, PROF])
    parse_errors = [e for e in out["errors"] if e["kind"] == "parse_error"]
    assert {(e["agent"], e["stage"]) for e in parse_errors} == {("agent_2", "answer")}
    assert len(parse_errors) == 2  # once per round
    assert "I believe it is 1963" in parse_errors[0]["raw"]
    garbled = agents_of(out, 1)["agent_2"]
    assert garbled["document_id"] == "jordan-garbled"
    assert "answer" not in garbled  # nothing guessed
    assert aggregator_of(out, 1)["order"] in (["agent_1", "agent_3"], ["agent_3", "agent_1"])
    assert set(out["answers"]) == {"1963", "1956"}
    assert (out["stop_reason"], out["rounds"]) == ("answers_stable", 2)


async def test_agent_model_error_is_recorded(scripted):
    rules = [
        (AGG_MARK, aggregator_keeping()),
        ("Berkeley professor", RuntimeError("provider down")),
        ("basketball player", agent_json("1963")),
    ]
    name, _ = scripted(rules)
    out = await run(name, [NBA, PROF], max_rounds=1)
    assert [(e["agent"], e["kind"]) for e in out["errors"]] == [("agent_2", "model_error")]
    assert out["answers"] == ["1963"]


async def test_no_readable_agent_answer_skips_the_aggregator(scripted):
    name, model = scripted(jordan_rules())
    out = await run(name, [GARBLED], max_rounds=1)
    assert model.calls_with(AGG_MARK) == 0
    assert out["answers"] == []
    assert "no_agent_answers" in [e["kind"] for e in out["errors"]]


async def test_unparseable_aggregator_is_recorded_not_guessed(scripted):
    rules = [(AGG_MARK, "Both years look right to me."), *jordan_rules()[1:]]
    name, model = scripted(rules)
    out = await run(name, [NBA, PROF], max_rounds=2, round_input="aggregator")
    assert out["verdict"] is None
    assert out["answers"] == []
    agg_errors = [e for e in out["errors"] if e["stage"] == "aggregate"]
    assert [e["kind"] for e in agg_errors] == ["parse_error", "parse_error"]
    round_two = [p for p in model.prompts if AGENT_MARK in p][2:]
    assert round_two and all("could not be read" in p for p in round_two)
    assert out["stop_reason"] == "answers_stable"


async def test_aggregator_unknown_gives_verdict_unknown(scripted):
    rules = [
        (AGG_MARK, json.dumps({"answers": ["unknown"], "explanation": "none backed"})),
        *jordan_rules()[1:],
    ]
    name, _ = scripted(rules)
    out = await run(name, [NBA], max_rounds=1)
    assert (out["answers"], out["verdict"]) == ([], "unknown")


def docs_numbered(n: int) -> list[Evidence]:
    return [doc(f"fact-{i}", f"Fact number {i} about Jordan.") for i in range(1, n + 1)]


def numbered_rules() -> list[Any]:
    def agent(prompt: str) -> str:
        match = re.search(r"Fact number (\d+) about", prompt)
        return agent_json(f"a{match.group(1)}" if match else "unknown")

    return [(AGG_MARK, aggregator_keeping()), (AGENT_MARK, agent)]


async def test_shuffle_is_reproducible_under_a_seed(scripted):
    agents = [f"agent_{i}" for i in range(1, 7)]

    def expected(seed: int) -> list[str]:
        order = list(agents)
        random.Random(seed).shuffle(order)
        return order

    orders = []
    for _ in range(2):
        name, model = scripted(numbered_rules())
        out = await run(name, docs_numbered(6), seed=7, max_rounds=2)
        orders.append([aggregator_of(out, r)["order"] for r in (1, 2)])
        prompt = next(p for p in model.prompts if AGG_MARK in p)
        positions = [prompt.index(f"{a} (document") for a in aggregator_of(out, 1)["order"]]
        assert positions == sorted(positions)  # the prompt lists them in that order
    assert orders[0] == orders[1] == [expected(8), expected(9)]
    assert expected(8) != agents and expected(8) != expected(9)
    name, _ = scripted(numbered_rules())
    other = await run(name, docs_numbered(6), seed=8, max_rounds=1)
    assert aggregator_of(other, 1)["order"] == expected(9)


async def test_twenty_documents_run_concurrently_under_the_cap(scripted):
    lock = threading.Lock()
    load = {"now": 0, "peak": 0}

    def slow_agent(prompt: str) -> str:
        with lock:
            load["now"] += 1
            load["peak"] = max(load["peak"], load["now"])
        time.sleep(0.05)
        with lock:
            load["now"] -= 1
        return agent_json("42")

    name, _ = scripted([(AGG_MARK, aggregator_keeping()), (AGENT_MARK, slow_agent)])
    out = await run(name, docs_numbered(20), max_concurrency=3)
    assert 2 <= load["peak"] <= 3
    assert len(agents_of(out, 1)) == 20
    assert {t["document_id"] for t in agents_of(out, 1).values()} == {
        f"fact-{i}" for i in range(1, 21)
    }
    assert (out["stop_reason"], out["rounds"], out["answers"]) == ("answers_stable", 2, ["42"])
    assert out["cost"]["total"]["llm_calls"] == 20 * 2 + 2


async def test_extra_documents_beyond_the_cap_are_dropped_and_recorded(scripted):
    name, model = scripted(numbered_rules())
    out = await run(name, docs_numbered(25), max_rounds=1)
    assert len(agents_of(out, 1)) == 20
    assert len(out["documents"]) == 20
    assert [e["kind"] for e in out["errors"]] == ["documents_dropped"]


async def test_documents_are_retrieved_when_none_are_given(scripted, fake_tools):
    name, model = scripted([(AGG_MARK, aggregator_keeping()), (AGENT_MARK, agent_json("Paris"))])
    out = await run(name, None, max_rounds=1, top_k=4)
    assert fake_tools["rag"] == [QUESTION]
    assert [d["id"] for d in out["documents"]] == ["rag-1"]
    assert agents_of(out, 1)["agent_1"]["document_id"] == "rag-1"
    assert out["answers"] == ["Paris"]


async def test_retrieval_failure_ends_with_no_documents(scripted):
    def broken(query: str, k: int) -> list[Evidence]:
        raise ConnectionError("index offline")

    name, model = scripted(jordan_rules())
    dispatch.override_tool("rag", broken)
    try:
        out = await run(name, None)
    finally:
        dispatch.override_tool("rag", None)
    assert (out["stop_reason"], out["answers"], out["verdict"]) == ("no_documents", [], None)
    assert [e["kind"] for e in out["errors"]] == ["tool_error"]
    assert "index offline" in out["errors"][0]["message"]
    assert model.prompts == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"question": "   "}, "question is empty"),
        ({"question": QUESTION, "documents": "not a list"}, "documents must be a list"),
        ({"question": QUESTION, "documents": [{"title": "no text"}]}, "'text' string"),
    ],
)
async def test_bad_input_is_rejected(scripted, payload, message):
    name, _ = scripted(jordan_rules())
    with pytest.raises(InputError, match=message):
        await graph.ainvoke(payload, context=MadamContext(model=name))


def test_settings_are_checked():
    with pytest.raises(ValueError, match="max_concurrency"):
        MadamContext(max_concurrency=0)
    with pytest.raises(ValueError, match="max_documents"):
        MadamContext(max_documents=0)


def test_graph_drawing_shows_every_branch():
    mermaid = graph.get_graph().draw_mermaid()
    for edge in (
        "prepare -.-> doc_agent",
        "prepare -. &nbsp;__end__&nbsp; .-> human_review",
        "doc_agent --> aggregate",
        "aggregate -.-> doc_agent",
        "aggregate -. &nbsp;__end__&nbsp; .-> human_review",
        "human_review -.-> __end__",
        "human_review -.-> human_review",  # with review: hold the proposal, then pause
    ):
        assert edge in mermaid


def test_methods_are_registered_as_question_methods():
    for method in ("madam-rag", "madam-no-rag", "madam-concat-rag", "madam-self-reflect"):
        assert METHODS[method].input_kind == "question"
        compiled, context_cls = load_method(method)
        assert compiled.name == method
        assert context_cls is MadamContext


# --------------------------------------------------------------------------- baselines

LIST_REPLY = json.dumps({"answers": ["1963", "1956"], "explanation": "Two people."})


async def test_no_rag_baseline_answers_from_the_question_only(scripted, fake_tools):
    name, model = scripted([("own knowledge", LIST_REPLY)])
    out = await no_rag_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA]}, context=MadamContext(model=name)
    )
    assert (out["answers"], out["stop_reason"], out["rounds"]) == (
        ["1963", "1956"],
        "single_answer",
        1,
    )
    assert fake_tools["rag"] == []
    assert len(model.prompts) == 1 and NBA["text"] not in model.prompts[0]
    assert out["documents"] == []


async def test_concat_baseline_puts_every_document_in_one_prompt(scripted):
    name, model = scripted([("Read all documents", LIST_REPLY)])
    out = await concat_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA, PROF, FAKE]}, context=MadamContext(model=name)
    )
    assert out["verdict"] == "1963; 1956"
    assert len(model.prompts) == 1
    assert all(d["text"] in model.prompts[0] for d in (NBA, PROF, FAKE))
    assert out["cost"]["total"]["llm_calls"] == 1


async def test_concat_baseline_unreadable_answer_is_recorded(scripted):
    name, _ = scripted([("Read all documents", "1963 and 1956")])
    out = await concat_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA]}, context=MadamContext(model=name)
    )
    assert (out["verdict"], out["answers"]) == (None, [])
    assert [e["kind"] for e in out["errors"]] == ["parse_error"]


async def test_self_reflection_reviews_and_refines_twice(scripted):
    refined = itertools.count(1)
    rules = [
        ("Check your answer critically", "Document 3 looks planted."),
        (
            "write an improved answer",
            lambda p: json.dumps(
                {"answers": ["1963", "1956"][: next(refined)], "explanation": "ok"}
            ),
        ),
        ("Read all documents", json.dumps({"answers": ["1998"], "explanation": "first try"})),
    ]
    name, model = scripted(rules)
    out = await reflect_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA, PROF, FAKE]}, context=MadamContext(model=name)
    )
    assert model.calls_with("Read all documents") == 1
    assert model.calls_with("Check your answer critically") == 2
    assert model.calls_with("write an improved answer") == 2
    assert (out["answers"], out["stop_reason"], out["rounds"]) == (
        ["1963", "1956"],
        "round_limit",
        3,
    )
    first_review = next(p for p in model.prompts if "Check your answer critically" in p)
    assert "Your answer: 1998" in first_review
    first_refine = next(p for p in model.prompts if "write an improved answer" in p)
    assert "Document 3 looks planted." in first_refine
    assert [t["agent"] for t in out["transcript"]] == [
        "single_agent",
        "reviewer",
        "single_agent",
        "reviewer",
        "single_agent",
    ]


async def test_self_reflection_with_zero_rounds_is_one_answer(scripted):
    name, model = scripted([("Read all documents", LIST_REPLY)])
    out = await reflect_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA]},
        context=MadamContext(model=name, reflection_rounds=0),
    )
    assert len(model.prompts) == 1
    assert (out["stop_reason"], out["rounds"]) == ("round_limit", 1)


async def test_baselines_with_no_documents_stop_without_calling_the_model(scripted):
    def empty(query: str, k: int) -> list[Evidence]:
        return []

    name, model = scripted([])
    dispatch.override_tool("rag", empty)
    try:
        for g in (concat_graph, reflect_graph):
            out = await g.ainvoke({"question": QUESTION}, context=MadamContext(model=name))
            assert out["stop_reason"] == "no_documents"
    finally:
        dispatch.override_tool("rag", None)
    assert model.prompts == []


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
async def test_one_ramdocs_question_on_the_embedded_model():
    from factdebate.datasets import DatasetError, load_ramdocs

    try:
        items = load_ramdocs().items
    except DatasetError as exc:
        pytest.skip(f"RAMDocs not available: {exc}")
    item = next(i for i in items if len(i.documents) == 2)
    # The embedded cap (512): with less, a rambling JSON string is cut and nothing parses.
    ctx = MadamContext(model="local", max_rounds=1, max_output_tokens=512, max_doc_chars=600)
    out = await graph.ainvoke({"question": item.question, "documents": item.documents}, context=ctx)
    assert (out["rounds"], out["stop_reason"]) == (1, "round_limit")
    assert {t["document_id"] for t in agents_of(out, 1).values()} == {
        d["id"] for d in item.documents
    }
    assert isinstance(out["answers"], list)
    assert out["verdict"] is None or isinstance(out["verdict"], str)
    assert out["cost"]["total"]["llm_calls"] == 3
    assert out["cost"]["total"]["output_tokens"] > 0
    scores = answer_scores(out["answers"], item.gold_answers, item.wrong_answers)
    assert set(scores) == {"exact_match", "precision", "recall", "f1"}


def test_input_and_output_schemas_render():
    """LangGraph Studio and the server build forms from these JSON schemas."""
    for g in (graph, no_rag_graph, concat_graph, reflect_graph):
        assert g.get_input_jsonschema()["required"] == ["question"]
        assert {"answers", "verdict", "transcript", "cost", "errors"} <= set(
            g.get_output_jsonschema()["properties"]
        )
