"""DebateCV paper fidelity: whole-dialogue debaters and moderator, sampling, no-evidence runs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from factdebate.graphs.cooperation import graph as cooperation_graph
from factdebate.graphs.debate_cv import graph
from factdebate.graphs.majority import graph as majority_graph
from factdebate.graphs.registry import load_method
from factdebate.nodes.common import model_for
from factdebate.nodes.debate_cv.context import (
    CooperationContext,
    DebateCVContext,
    MajorityContext,
    RAGCoTContext,
)
from tests.conftest import doc

CLAIM = "The Eiffel Tower is located in Paris."
EVIDENCE = [doc("e1", "The Eiffel Tower stands in Paris."), doc("e2", "It was built in 1889.")]
AFF = "Your side: the claim is TRUE"
NEG = "Your side: the claim is FALSE"
MOD = "has just ended"
FINAL = "reached its round limit"


def round_of(prompt: str) -> int:
    """How many arguments a debater prompt quotes, as a round counter for the script."""
    return prompt.count("<argument ")


def debater(side: str) -> Any:
    def reply(prompt: str) -> str:
        return f"{side.upper()}-ARG-{round_of(prompt) + 1}"

    return reply


def moderator_continues(prompt: str) -> str:
    return json.dumps({"new_insight": "i", "evidence_gaps": "g", "proceed": True, "reason": "more"})


def script(moderator: Any = moderator_continues) -> list[Any]:
    return [
        (FINAL, json.dumps({"justification": "weighed", "verdict": "REFUTES"})),
        (MOD, moderator),
        (AFF, debater("aff")),
        (NEG, debater("neg")),
    ]


async def run(model: str, evidence: Any = EVIDENCE, **kw: Any) -> dict[str, Any]:
    return await graph.ainvoke(
        {"claim": CLAIM, "evidence": evidence}, context=DebateCVContext(model=model, **kw)
    )


async def test_debaters_see_every_earlier_argument_of_both_sides(scripted):
    name, model = scripted(script())
    out = await run(name)
    assert out["rounds"] == 3
    # argument numbers: aff 1, neg 2, aff 3, neg 4, aff 5, neg 6
    args = [t["answer"] for t in out["transcript"] if t["agent"] in ("affirmative", "negative")]
    assert args == ["AFF-ARG-1", "NEG-ARG-2", "AFF-ARG-3", "NEG-ARG-4", "AFF-ARG-5", "NEG-ARG-6"]
    last_negative = [p for p in model.prompts if NEG in p][-1]
    for earlier in args[:5]:
        assert earlier in last_negative
    # in order, each tagged with its round and side
    positions = [last_negative.index(a) for a in args[:5]]
    assert positions == sorted(positions)
    assert '<argument round="1" side="affirmative">' in last_negative
    last_affirmative = [p for p in model.prompts if AFF in p][-1]
    assert all(a in last_affirmative for a in args[:4])


async def test_moderator_reads_the_whole_dialogue_each_round(scripted):
    name, model = scripted(script())
    await run(name)
    third = next(p for p in model.prompts if "Round 3 has just ended" in p)
    for arg in ("AFF-ARG-1", "NEG-ARG-2", "AFF-ARG-3", "NEG-ARG-4", "AFF-ARG-5", "NEG-ARG-6"):
        assert arg in third


async def test_final_step_decides_from_the_whole_debate(scripted):
    name, model = scripted(script())
    out = await run(name)
    assert out["stop_reason"] == "round_limit"
    final = next(p for p in model.prompts if FINAL in p)
    for arg in ("AFF-ARG-1", "NEG-ARG-2", "AFF-ARG-3", "NEG-ARG-4", "AFF-ARG-5", "NEG-ARG-6"):
        assert arg in final
    assert re.search(r"Round 1: insight: i", final)  # and its own notes


def test_sampling_defaults_follow_appendix_c():
    for cls in (DebateCVContext, RAGCoTContext, MajorityContext, CooperationContext):
        ctx = cls()
        assert (ctx.temperature, ctx.top_p) == (0.7, 1.0), cls.__name__


async def test_top_p_and_temperature_reach_the_model():
    ctx = DebateCVContext(model="openai-compatible:m@http://127.0.0.1:9/v1")
    model = await model_for(ctx, "judge")
    assert (model.temperature, model.top_p) == (0.7, 1.0)  # type: ignore[attr-defined]
    ctx = DebateCVContext(model="openai-compatible:m@http://127.0.0.1:9/v1", top_p=0.5)
    assert (await model_for(ctx, "judge")).top_p == 0.5  # type: ignore[attr-defined]
    ctx = DebateCVContext(model="openai-compatible:m@http://127.0.0.1:9/v1", top_p=0.0)
    assert (await model_for(ctx, "judge")).top_p is None  # type: ignore[attr-defined]


async def test_explicitly_empty_evidence_debates_without_evidence(scripted, fake_tools):
    name, model = scripted(script())
    out = await run(name, evidence=[], max_rounds=1)
    assert fake_tools["rag"] == [] and fake_tools["search"] == []
    assert out["evidence"] == [] and out["verdict"] == "REFUTES"
    assert "Eiffel Tower stands in Paris, France" not in model.prompts[0]


async def test_absent_evidence_is_still_retrieved(scripted, fake_tools):
    name, _ = scripted(script())
    out = await run(name, evidence=None, max_rounds=1)
    assert fake_tools["rag"] == [CLAIM] and out["evidence"][0]["id"] == "rag-1"


# --------------------------------------------------------------------------- Majority

COT = "Check whether the claim below is true"
VOTE = "Several fact-checkers each checked the claim"


def voters(*labels: str) -> Any:
    answers = iter(labels)
    return lambda prompt: f"Voter reasoning.\n{next(answers)}"


async def run_majority(model: str, **kw: Any) -> dict[str, Any]:
    return await majority_graph.ainvoke(
        {"claim": CLAIM, "evidence": EVIDENCE}, context=MajorityContext(model=model, **kw)
    )


async def test_majority_verdict_comes_from_a_voting_model(scripted):
    name, model = scripted(
        [
            (VOTE, "Two of three refute it.\n**REFUTES**"),
            (COT, voters("**REFUTES**", "**SUPPORTS**", "**REFUTES**")),
        ]
    )
    out = await run_majority(name)
    assert (out["verdict"], out["stop_reason"]) == ("REFUTES", "majority")
    vote_prompt = next(p for p in model.prompts if VOTE in p)
    assert vote_prompt.count("<vote ") == 3 and 'label="SUPPORTS"' in vote_prompt
    assert out["cost"]["judge"]["llm_calls"] == 1 and out["cost"]["debater"]["llm_calls"] == 3


async def test_majority_tie_is_recorded_and_the_voting_model_decides(scripted):
    name, _ = scripted(
        [
            (VOTE, "The refuting reasoning is better founded.\n**REFUTES**"),
            (COT, voters("**REFUTES**", "**SUPPORTS**", "**CONFLICTING**")),
        ]
    )
    out = await run_majority(name)
    assert (out["verdict"], out["stop_reason"]) == ("REFUTES", "majority_tie")
    assert "(tie)" in out["justification"]


async def test_unreadable_votes_are_marked_and_recorded(scripted):
    name, model = scripted(
        [(VOTE, "Only one readable.\n**SUPPORTS**"), (COT, voters("no label", "**SUPPORTS**", "?"))]
    )
    out = await run_majority(name)
    assert out["verdict"] == "SUPPORTS"
    assert [e["kind"] for e in out["errors"]] == ["parse_error", "parse_error"]
    assert next(p for p in model.prompts if VOTE in p).count('label="unreadable"') == 2
    assert "unreadable x2" in out["justification"]


async def test_unreadable_voting_output_gives_no_verdict(scripted):
    name, _ = scripted([(VOTE, "I would rather not say."), (COT, voters(*["**SUPPORTS**"] * 3))])
    out = await run_majority(name)
    assert (out["verdict"], out["stop_reason"]) == (None, "vote_unparseable")
    assert out["errors"][-1]["agent"] == "vote_counter"


# --------------------------------------------------------------------------- Cooperation

USER = "You are the user."
ASSISTANT = "You are the assistant."


async def run_coop(model: str, **kw: Any) -> dict[str, Any]:
    return await cooperation_graph.ainvoke(
        {"claim": CLAIM, "evidence": EVIDENCE}, context=CooperationContext(model=model, **kw)
    )


async def test_cooperation_user_directs_until_task_done(scripted):
    def user(prompt: str) -> str:
        exchanges = prompt.count("Assistant (exchange")
        return "TASK DONE" if exchanges >= 2 else f"Instruction: check part {exchanges + 1}."

    def assistant(prompt: str) -> str:
        return (
            "Part checked against [1].\n**SUPPORTS**"
            if "part 2" in prompt
            else "Hmm.\n**NOT ENOUGH INFO**"
        )

    name, model = scripted([(USER, user), (ASSISTANT, assistant)])
    out = await run_coop(name)
    assert (out["verdict"], out["stop_reason"], out["rounds"]) == ("SUPPORTS", "task_done", 2)
    agents = [t["agent"] for t in out["transcript"]]
    assert agents == ["user", "assistant", "user", "assistant", "user"]
    second = [p for p in model.prompts if ASSISTANT in p][1]
    assert "Instruction: check part 1." in second and "Instruction: check part 2." in second
    assert "The Eiffel Tower stands in Paris." in second  # RAG: the evidence is in the prompt


async def test_cooperation_stops_at_the_turn_limit(scripted):
    name, model = scripted(
        [(USER, "Instruction: look again."), (ASSISTANT, "Still unsure.\n**REFUTES**")]
    )
    out = await run_coop(name, max_turns=2)
    assert (out["verdict"], out["stop_reason"], out["rounds"]) == ("REFUTES", "turn_limit", 2)
    assert model.calls_with(ASSISTANT) == 2 and model.calls_with(USER) == 2


async def test_cooperation_done_before_any_answer_is_not_a_stop(scripted):
    name, model = scripted([(USER, "TASK DONE"), (ASSISTANT, "Fine.\n**SUPPORTS**")])
    out = await run_coop(name, max_turns=1)
    assert (out["verdict"], out["stop_reason"]) == ("SUPPORTS", "turn_limit")


async def test_cooperation_unreadable_answer_is_recorded_not_guessed(scripted):
    name, _ = scripted([(USER, "Instruction: go."), (ASSISTANT, "I think so, probably.")])
    out = await run_coop(name, max_turns=1)
    assert out["verdict"] is None and out["errors"][0]["kind"] == "parse_error"


def test_cooperation_is_registered():
    graph_, ctx = load_method("cooperation")
    assert ctx is CooperationContext and graph_ is cooperation_graph
    with pytest.raises(ValueError, match="max_turns"):
        CooperationContext(max_turns=0)
