"""Self-consistency graphs with scripted models: k calls, the vote, ties, unreadable samples."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from factdebate import FactDebateError
from factdebate.api import CONTRACT_KEYS
from factdebate.graphs.registry import METHODS, context_class, load_method
from factdebate.nodes.self_consistency.vote import answer_key, tally
from tests.conftest import doc

CLAIM = "The Eiffel Tower is located in Paris."
EVIDENCE = [doc("e1", "The Eiffel Tower stands in Paris."), doc("e2", "It was built in 1889.")]
QUESTION = "In which year was Michael Jordan born?"
DOCUMENTS = [doc("d1", "Michael Jordan was born in 1963."), doc("d2", "Born 1963, Brooklyn.")]
RAG_COT = "using only the documents given"
COT = "step by step"


def in_turn(answers: list[str]) -> Callable[[str], str]:
    """Answer the n-th call with ``answers[n]`` (the calls' order, not the samples')."""
    queue = iter(answers)
    return lambda prompt: next(queue)


def labelled(labels: list[str]) -> Callable[[str], str]:
    return in_turn([f"Reasoning {n}.\n**{label}**" for n, label in enumerate(labels)])


async def run(method: str, inputs: dict[str, Any], **settings: Any) -> dict[str, Any]:
    graph, cls = load_method(method)
    out: dict[str, Any] = await graph.ainvoke(inputs, context=cls(**settings))
    return out


def sample_label(out: dict[str, Any], number: int) -> str | None:
    turns = {t["agent"]: t for t in out["transcript"]}
    return turns[f"sample_{number}"]["label"]


@pytest.mark.parametrize("method", ["self-consistency", "self-consistency-cot"])
async def test_k_5_makes_5_calls_and_the_majority_wins(scripted, fake_tools, method):
    marker = RAG_COT if method == "self-consistency" else COT
    labels = ["REFUTES", "SUPPORTS", "SUPPORTS", "REFUTES", "SUPPORTS"]
    name, model = scripted([(marker, labelled(labels))])
    out = await run(method, {"claim": CLAIM, "evidence": EVIDENCE}, model=name, k=5)
    assert len(model.prompts) == 5
    assert out["cost"]["total"]["llm_calls"] == 5
    assert (out["verdict"], out["stop_reason"], out["rounds"]) == ("SUPPORTS", "vote", 1)
    assert sorted(t["agent"] for t in out["transcript"]) == [f"sample_{i}" for i in range(1, 6)]
    assert out["decided_by"]["agent"] == "vote" and out["decided_by"]["reason"] == "vote"
    detail = out["decided_by"]["detail"]
    assert "SUPPORTS x3" in detail and "REFUTES x2" in detail
    assert out["justification"].startswith(detail)
    assert set(out) <= set(CONTRACT_KEYS) | {"evidence"}


async def test_samples_read_the_same_evidence_retrieved_once(scripted, fake_tools):
    name, model = scripted([(RAG_COT, labelled(["SUPPORTS"] * 4))])
    out = await run("self-consistency", {"claim": CLAIM}, model=name, k=4)
    assert fake_tools["rag"] == [CLAIM]  # one retrieval for the four samples
    assert all("The Eiffel Tower stands in Paris, France." in p for p in model.prompts)
    assert [d["id"] for d in out["evidence"]] == ["rag-1"]


async def test_cot_samples_read_no_evidence(scripted, fake_tools):
    name, model = scripted([(COT, labelled(["SUPPORTS"] * 3))])
    out = await run("self-consistency-cot", {"claim": CLAIM}, model=name, k=3)
    assert fake_tools == {"rag": [], "search": []}
    assert all("<evidence" not in p for p in model.prompts)
    assert out["verdict"] == "SUPPORTS"


@pytest.mark.parametrize("k", [2, 4, 6])
async def test_a_tie_goes_to_the_earliest_sample(scripted, fake_tools, k):
    """Half SUPPORTS, half REFUTES: whichever order the calls ran in, sample_1's label wins."""
    name, _ = scripted([(COT, labelled(["SUPPORTS", "REFUTES"] * (k // 2)))])
    out = await run("self-consistency-cot", {"claim": CLAIM}, model=name, k=k)
    assert out["stop_reason"] == "vote_tie"
    assert out["verdict"] == sample_label(out, 1)
    assert "Tie between" in out["decided_by"]["detail"]
    assert "sample_1" in out["decided_by"]["detail"]


async def test_unreadable_samples_do_not_vote_and_are_recorded(scripted, fake_tools):
    answers = ["I cannot say.", "Reasoning.\n**REFUTES**", "No label here."]
    name, _ = scripted([(COT, in_turn(answers))])
    out = await run("self-consistency-cot", {"claim": CLAIM}, model=name, k=3)
    assert (out["verdict"], out["stop_reason"]) == ("REFUTES", "vote")
    assert [e["kind"] for e in out["errors"]] == ["parse_error", "parse_error"]
    unread = sorted(t["agent"] for t in out["transcript"] if t["label"] is None)
    assert sorted(e["agent"] for e in out["errors"]) == unread
    assert "unreadable x2" in out["decided_by"]["detail"]


async def test_no_readable_sample_gives_no_verdict(scripted, fake_tools):
    name, _ = scripted([(COT, "I will not answer.")])
    out = await run("self-consistency-cot", {"claim": CLAIM}, model=name, k=3)
    assert (out["verdict"], out["stop_reason"]) == (None, "no_votes")
    assert len(out["errors"]) == 3


def _answers(*answers: str) -> str:
    return json.dumps({"answers": list(answers), "explanation": f"Read {answers}."})


async def test_qa_votes_over_normalised_answer_sets(scripted):
    replies = [_answers("1963"), _answers("the 1963"), _answers("1963", "1956"), _answers("1956")]
    name, model = scripted([(QUESTION, in_turn([*replies, "not json at all"]))])
    out = await run(
        "self-consistency-qa", {"question": QUESTION, "documents": DOCUMENTS}, model=name, k=5
    )
    assert len(model.prompts) == 5 and out["cost"]["total"]["llm_calls"] == 5
    assert (out["stop_reason"], out["answers"]) == ("vote", ["1963"])
    assert out["verdict"] == "1963"
    assert "x2" in out["decided_by"]["detail"] and "unreadable x1" in out["decided_by"]["detail"]
    assert [d["id"] for d in out["documents"]] == ["d1", "d2"]
    assert all("Born 1963, Brooklyn." in p for p in model.prompts)


async def test_qa_without_documents_samples_nothing(scripted):
    def broken(query: str, k: int) -> list[Any]:
        raise ConnectionError("index offline")

    from factdebate.tools import dispatch

    name, model = scripted([(QUESTION, _answers("1963"))])
    dispatch.override_tool("rag", broken)
    try:
        out = await run("self-consistency-qa", {"question": QUESTION}, model=name, k=3)
    finally:
        dispatch.override_tool("rag", None)
    assert (out["stop_reason"], out["verdict"], model.prompts) == ("no_documents", None, [])


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([(1, "S"), (2, "S"), (3, "R")], ("S", "vote")),
        ([(1, "R"), (2, "S"), (3, "S"), (4, "R")], ("R", "vote_tie")),
        ([(4, "R"), (3, "S"), (2, "S"), (1, "R")], ("R", "vote_tie")),  # numbers, not list order
        ([(1, "N"), (2, "S"), (3, "R"), (4, "R"), (5, "S")], ("S", "vote_tie")),
        ([(1, None), (2, "R"), (3, "S")], ("R", "vote_tie")),
        ([(1, None), (2, None)], (None, "no_votes")),
        ([(1, "S"), (2, None), (3, None)], ("S", "vote")),
    ],
)
def test_tally_rule_on_crafted_ties(votes, expected):
    result = tally(votes)
    assert (result.winner, result.reason) == expected


def test_tally_reports_tied_options_and_unreadable():
    result = tally([(1, "N"), (2, "S"), (3, "R"), (4, None)])
    assert (result.tied, result.unreadable, result.first) == (
        ["N", "S", "R"],
        1,
        {"N": 1, "S": 2, "R": 3},
    )


def test_answer_key_ignores_order_case_and_articles():
    assert answer_key(["The Bulls", "1963"]) == answer_key(["1963", "bulls"])
    assert answer_key([]) == ()


@pytest.mark.parametrize(
    "method", sorted(m for m, s in METHODS.items() if s.family == "self-consistency")
)
def test_settings_k_and_temperature(method):
    cls = context_class(method)
    assert (cls().k, cls().temperature) == (5, 0.7)
    for bad in (0, 65, 2.5):
        with pytest.raises(FactDebateError, match="setting k"):
            cls(k=bad)
    assert "Range 1..64" in next(
        f.metadata["description"] for f in cls.__dataclass_fields__.values() if f.name == "k"
    )
