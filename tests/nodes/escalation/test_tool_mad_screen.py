"""Escalating Tool-MAD on scripted models: the screen settles, or the debate goes on from it."""

from __future__ import annotations

from typing import Any

import pytest

from factdebate.graphs.escalate_tool_mad import EscalateToolMADContext
from factdebate.graphs.escalate_tool_mad import graph as escalate
from factdebate.graphs.tool_mad import graph as tool_mad
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.tools.core.errors import SettingsError
from tests.nodes.tool_mad.test_graph import ARGUE_MARK, CLAIM, JUDGE_MARK, QUERY_MARK, debate_rules

SCORE_MARK = "StatementGeneratorOutput"  # RAGAS's first scoring prompt


async def run_escalation(model: str, **settings: Any) -> dict[str, Any]:
    context = EscalateToolMADContext(model=model, **settings)
    return await escalate.ainvoke({"claim": CLAIM}, context=context)


async def test_agreeing_screen_stops_after_round_one_answers_unscored(scripted, fake_tools):
    name, model = scripted(debate_rules())
    out = await run_escalation(name)
    assert out["verdict"] == "SUPPORTS"
    assert out["stop_reason"] == "screen_agreed"
    assert out["decided_by"]["agent"] == "screen"
    assert out["rounds"] == 1
    assert model.calls_with(SCORE_MARK) == 0 and model.calls_with(JUDGE_MARK) == 0
    assert model.calls_with(QUERY_MARK) == 2 and model.calls_with(ARGUE_MARK) == 2
    assert len(model.prompts) == 4
    screen = out["screen"]
    assert screen["labels"] == ["SUPPORTS", "SUPPORTS"]
    assert screen["agreement"] == 1.0 and not screen["escalated"]
    assert screen["reason"] == "agreed" and screen["llm_calls"] == 4
    assert [t["faithfulness"] for t in out["transcript"]] == [None, None]
    assert out["drafts"] == {}
    assert fake_tools == {"rag": ["Eiffel Tower location"], "search": ["Eiffel Tower location"]}


async def test_disagreeing_screen_escalates_and_makes_exactly_tool_mads_calls(scripted, fake_tools):
    rules = debate_rules(label_a="SUPPORTS", label_b="REFUTES")
    name, model = scripted(rules)
    out = await run_escalation(name, max_rounds=2)
    escalated_prompts, escalated_tools = (
        list(model.prompts),
        {k: list(v) for k, v in fake_tools.items()},
    )
    screen = out["screen"]
    assert screen["escalated"] and screen["reason"] == "disagreed"
    assert screen["labels"] == ["SUPPORTS", "REFUTES"] and screen["agreement"] == 0.5
    assert screen["llm_calls"] == 4  # the screen's own calls: two queries, two answers

    plain_name, plain_model = scripted(rules)
    fake_tools["rag"].clear()
    fake_tools["search"].clear()
    plain = await tool_mad.ainvoke(
        {"claim": CLAIM}, context=ToolMADContext(model=plain_name, max_rounds=2)
    )
    # the screen's queries, retrievals and answers are round 1's: nothing is made twice
    assert len(escalated_prompts) == len(plain_model.prompts)
    assert sorted(escalated_prompts) == sorted(plain_model.prompts)
    assert escalated_tools == fake_tools
    assert escalated_tools["rag"] == ["Eiffel Tower location"] * 2  # one query per round
    assert out["cost"]["total"]["llm_calls"] == plain["cost"]["total"]["llm_calls"]
    assert out["verdict"] == plain["verdict"] and out["stop_reason"] == plain["stop_reason"]
    assert len(out["transcript"]) == 4
    assert all(t["faithfulness"] is not None for t in out["transcript"])


async def test_a_share_of_one_half_lets_a_split_screen_stop_on_the_first_label(
    scripted, fake_tools
):
    name, model = scripted(debate_rules(label_a="REFUTES", label_b="SUPPORTS"))
    out = await run_escalation(name, screen_share=0.5)
    assert out["stop_reason"] == "screen_agreed" and out["verdict"] == "REFUTES"
    assert model.calls_with(SCORE_MARK) == 0


async def test_screen_all_runs_the_method_and_records_the_screens_verdict(scripted, fake_tools):
    name, model = scripted(debate_rules())
    out = await run_escalation(name, screen_all=True)
    assert out["screen"]["reason"] == "screen_all" and out["screen"]["escalated"]
    assert out["screen"]["verdict"] == "SUPPORTS"
    assert out["stop_reason"] == "consensus"  # Tool-MAD's own stop after its scoring
    assert model.calls_with(SCORE_MARK) > 0


async def test_screen_model_answers_round_one_and_the_debaters_model_the_rest(scripted, fake_tools):
    screen_name, screen_model = scripted(debate_rules(label_a="SUPPORTS", label_b="REFUTES"))
    name, model = scripted(debate_rules(label_a="SUPPORTS", label_b="REFUTES"))
    out = await run_escalation(name, screen_model=screen_name, max_rounds=2)
    assert out["screen"]["model"] == screen_name
    assert screen_model.calls_with(QUERY_MARK) == 2 and screen_model.calls_with(ARGUE_MARK) == 2
    assert len(screen_model.prompts) == 4
    assert model.calls_with(ARGUE_MARK) == 2  # round 2 only


def test_tool_mads_own_defaults_are_untouched():
    plain, escalation = ToolMADContext(), EscalateToolMADContext()
    for key in ("max_rounds", "stability_score", "tool_a", "tool_b", "gate_profile"):
        assert getattr(plain, key) == getattr(escalation, key)
    assert escalation.screen_share == 1.0 and escalation.screen_model == ""


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"screen_share": 1.5}, "screen_share must be within 0.5..1"),
        ({"screen_share": 0.2}, "screen_share must be within 0.5..1"),
        ({"screen_model": "gpt-nothing"}, "screen_model='gpt-nothing' names no model"),
    ],
)
def test_bad_screen_settings_are_one_line_before_any_call(settings, words):
    with pytest.raises(SettingsError, match=words) as raised:
        EscalateToolMADContext(**settings)
    assert "\n" not in str(raised.value)


def test_a_served_screen_model_must_be_one_the_operator_allows(monkeypatch):
    from factdebate.nodes.policy import operator_problem

    monkeypatch.setenv("FACTDEBATE_SERVED_MODELS", "openai:gpt-4o-mini")
    classes = [EscalateToolMADContext]
    assert operator_problem({"screen_model": "openai:gpt-4o-mini"}, classes) is None
    refused = operator_problem({"screen_model": "openai:gpt-4o"}, classes)
    assert refused and "screen_model" in refused and "not allowed" in refused


def test_the_served_graph_refuses_a_screen_model_the_operator_did_not_allow(monkeypatch):
    from factdebate.graphs.registry import served_graph

    monkeypatch.setenv("FACTDEBATE_SERVED_MODELS", "openai:gpt-4o-mini")
    served = served_graph("escalate-tool-mad").context_schema
    assert served(screen_model="openai:gpt-4o-mini").screen_model == "openai:gpt-4o-mini"
    with pytest.raises(SettingsError, match="screen_model='openai:gpt-4o' is not allowed"):
        served(screen_model="openai:gpt-4o")


async def test_an_unreadable_screen_escalates(scripted, fake_tools):
    rules = debate_rules()
    rules.insert(0, (lambda p: ARGUE_MARK in p and "local document collection" in p, "Hmm."))
    name, _ = scripted(rules)
    out = await run_escalation(name, max_rounds=1)
    assert out["screen"]["labels"] == [None, "SUPPORTS"]
    assert out["screen"]["reason"] == "disagreed" and out["screen"]["escalated"]
    assert out["stop_reason"] != "screen_agreed"
