"""Baseline graphs (CoT, ReAct, MAD, MADKE) driven by scripted models."""

from __future__ import annotations

from typing import Any

import pytest

from factdebate.graphs.registry import load_method
from factdebate.tools import dispatch

CLAIM = "The Eiffel Tower is located in Paris."
CONTRACT = {"verdict", "justification", "stop_reason", "rounds", "transcript", "cost", "errors"}


async def run(method: str, **settings: Any) -> dict[str, Any]:
    graph, context_cls = load_method(method)
    out: dict[str, Any] = await graph.ainvoke({"claim": CLAIM}, context=context_cls(**settings))
    assert set(out) >= CONTRACT, f"{method} misses {CONTRACT - set(out)}"
    return out


@pytest.mark.parametrize("method", ["cot", "react", "mad", "madke"])
def test_registered_and_drawable(method: str) -> None:
    graph, _ = load_method(method)
    assert graph.name == method
    assert "__end__" in graph.get_graph().draw_mermaid()


async def test_cot_single_call_no_evidence(scripted, fake_tools):
    name, model = scripted([("step by step", "Paris has it.\n**SUPPORTS**")])
    out = await run("cot", model=name)
    assert out["verdict"] == "SUPPORTS" and out["rounds"] == 1
    assert out["cost"]["total"]["llm_calls"] == 1
    assert out["transcript"][0]["evidence"] == []
    assert fake_tools == {"rag": [], "search": []}
    assert "<evidence" not in model.prompts[0]


async def test_cot_unparseable_answer_is_recorded_not_guessed(scripted, fake_tools):
    name, _ = scripted([], default="I am unsure about this one.")
    out = await run("cot", model=name)
    assert out["verdict"] is None
    assert [e["kind"] for e in out["errors"]] == ["parse_error"]
    assert out["errors"][0]["raw"] == "I am unsure about this one."


async def test_react_searches_then_answers(scripted, fake_tools):
    def step(prompt: str) -> str:
        return (
            "SEARCH: [Eiffel Tower city]"
            if "(none yet)" in prompt
            else ("Document says Paris.\n**SUPPORTS**")
        )

    name, model = scripted([("fact-checking agent", step)])
    out = await run("react", model=name)
    assert fake_tools["rag"] == ["Eiffel Tower city"]
    assert out["verdict"] == "SUPPORTS"
    assert out["stop_reason"] == "answered"
    searches = [t for t in out["transcript"] if t.get("query")]
    assert [d["id"] for d in searches[0]["evidence"]] == ["rag-1"]
    assert "Eiffel Tower stands in Paris" in model.prompts[-1]
    assert out["cost"]["total"]["llm_calls"] == 2


async def test_react_search_budget_forces_an_answer(scripted, fake_tools):
    def step(prompt: str) -> str:
        if "may not search any more" in prompt:
            return "Enough.\n**REFUTES**"
        return "SEARCH: [more about the tower]"

    name, _ = scripted([("fact-checking agent", step)])
    out = await run("react", model=name, max_steps=2, tool="search")
    assert len(fake_tools["search"]) == 2
    assert out["verdict"] == "REFUTES" and out["rounds"] == 3


async def test_react_without_query_formulation_searches_the_claim_once(scripted, fake_tools):
    name, model = scripted([("fact-checking agent", "Paris.\n**SUPPORTS**")])
    out = await run("react", model=name, query_formulation=False)
    assert fake_tools["rag"] == [CLAIM]
    assert out["verdict"] == "SUPPORTS"
    assert model.calls_with("may not search any more") == 1


async def test_react_tool_failure_is_recorded(scripted, fake_tools):
    def broken(query: str, k: int) -> list[Any]:
        raise RuntimeError("index offline")

    dispatch.override_tool("rag", broken)
    name, _ = scripted([("fact-checking agent", "Nothing found.\n**NOT ENOUGH INFO**")])
    out = await run("react", model=name, query_formulation=False)
    assert out["verdict"] == "NOT ENOUGH INFO"
    assert [e["kind"] for e in out["errors"]] == ["tool_error"]


def mad_rules(judge: Any) -> list[Any]:
    return [
        ("You judge a fact-checking debate between", judge),
        ("AFFIRMATIVE side", "The tower is in Paris, as every source says."),
        ("NEGATIVE side", "Perhaps it is a replica in Las Vegas."),
    ]


async def test_mad_judge_decides_early(scripted, fake_tools):
    name, model = scripted(mad_rules("Affirmative is right.\n**SUPPORTS**"))
    out = await run("mad", model=name)
    assert out["verdict"] == "SUPPORTS" and out["rounds"] == 1
    assert out["stop_reason"] == "moderator"
    assert [t["agent"] for t in out["transcript"]] == ["affirmative", "negative"]
    assert out["cost"]["debater"]["llm_calls"] == 2 and out["cost"]["judge"]["llm_calls"] == 1
    assert fake_tools == {"rag": [], "search": []}
    assert "Las Vegas" in next(p for p in model.prompts if "You judge" in p)


async def test_mad_continue_until_round_limit(scripted, fake_tools):
    def judge(prompt: str) -> str:
        return "Refuted.\n**REFUTES**" if "last round" in prompt else "Unclear.\nCONTINUE"

    name, model = scripted(mad_rules(judge))
    out = await run("mad", model=name, max_rounds=3)
    assert out["rounds"] == 3 and out["stop_reason"] == "round_limit"
    assert out["verdict"] == "REFUTES"
    assert out["errors"] == []
    # tit for tat: the round-2 affirmative sees the round-1 negative argument
    assert "Las Vegas" in [p for p in model.prompts if "AFFIRMATIVE side" in p][1]


async def test_mad_judge_only_at_limit_when_configured(scripted, fake_tools):
    name, model = scripted(mad_rules("Paris.\n**SUPPORTS**"))
    out = await run("mad", model=name, max_rounds=2, judge_each_round=False)
    assert out["rounds"] == 2 and model.calls_with("You judge") == 1


async def test_mad_unparseable_final_judge_is_an_error(scripted, fake_tools):
    name, _ = scripted(mad_rules("CONTINUE"))
    out = await run("mad", model=name, max_rounds=1)
    assert out["verdict"] is None
    assert out["errors"][0]["kind"] == "parse_error"


def madke_rules(a: str, b: str, judge: str = "Judged.\n**REFUTES**") -> list[Any]:
    return [
        ("You judge a fact-checking debate whose", judge),
        ("You are debater a", f"Doc says Paris.\n**{a}**"),
        ("You are debater b", f"Hmm.\n**{b}**"),
    ]


async def test_madke_retrieves_once_and_stops_on_agreement(scripted, fake_tools):
    name, model = scripted(madke_rules("SUPPORTS", "SUPPORTS"))
    out = await run("madke", model=name)
    assert fake_tools["rag"] == [CLAIM]
    assert out["verdict"] == "SUPPORTS" and out["stop_reason"] == "consensus"
    assert out["rounds"] == 1
    assert all("Eiffel Tower stands in Paris" in p for p in model.prompts)


async def test_madke_disagreement_goes_to_judge_with_one_retrieval(scripted, fake_tools):
    name, model = scripted(madke_rules("SUPPORTS", "REFUTES"))
    out = await run("madke", model=name, max_rounds=2, tool="search")
    assert fake_tools["search"] == [CLAIM] and fake_tools["rag"] == []
    assert out["rounds"] == 2 and out["stop_reason"] == "round_limit"
    assert out["verdict"] == "REFUTES"
    assert len(out["transcript"]) == 4
    assert out["cost"]["total"]["llm_calls"] == 5
    round2_a = [p for p in model.prompts if "You are debater a" in p][1]
    assert "debater_b: Hmm." in round2_a
