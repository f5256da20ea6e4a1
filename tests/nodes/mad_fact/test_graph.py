"""MAD-Fact driven by scripted models: clerk, debate rules, queries, judge, concurrency, scores."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from factdebate.api import CONTRACT_KEYS
from factdebate.bench.running.long_form import aevaluate_checker, ascore_answer
from factdebate.datasets import AtomicClaimItem
from factdebate.graphs.jury import graph as jury_graph
from factdebate.graphs.mad_fact import graph
from factdebate.graphs.registry import METHODS, load_method
from factdebate.graphs.single_verifier import graph as verifier_graph
from factdebate.nodes.mad_fact.clerk import is_checkable
from factdebate.nodes.mad_fact.context import MADFactContext, SingleVerifierContext
from factdebate.nodes.mad_fact.jury import majority, strategy_for
from factdebate.nodes.parse import ParseFailure, parse_confidence, parse_truth

CLERK = "You are the clerk of a fact-checking jury"
CONF = "how confident are you"
QUERY = "Write one new web search query"
OPINION = "Give your opinion on the claim"
RATE = "Reason step by step from the results"
CLAIM = "The Eiffel Tower is in Paris."
CLAIM2 = "The Eiffel Tower was completed in 1889."
ANSWER = "The Eiffel Tower is in Paris. It was completed in 1889. You should visit in spring."


def clerk_rule(claims: list[str], marker: str = CLERK) -> tuple[Any, str]:
    return (marker, json.dumps({"claims": claims}))


def role(title: str) -> Any:
    return lambda p, t=title: f"You are the {t} on a jury" in p


def opinion(label: str, title: str | None = None, claim: str | None = None) -> tuple[Any, str]:
    def match(p: str) -> bool:
        return (
            OPINION in p
            and (title is None or f"You are the {title} on a jury" in p)
            and (claim is None or "Claim (" in p and claim in p.split("\n\n")[1])
        )

    return (match, f"Reasoned.\n**{label}**")


def confidence(value: float, title: str | None = None) -> tuple[Any, str]:
    return (
        lambda p: CONF in p and (title is None or f"You are the {title} on a" in p),
        f"I know this well.\nCONFIDENCE: {value}",
    )


def query_by_role() -> tuple[Any, Any]:
    def answer(p: str) -> str:
        for title in ("Member of the Public", "Critic", "News Author"):
            if f"You are the {title} on a jury" in p:
                return f"[{title} Eiffel Tower]"
        return "[Eiffel Tower]"

    return (QUERY, answer)


def ctx(model: str, **settings: Any) -> MADFactContext:
    return MADFactContext(model=model, merge_method="text", **settings)


async def run_jury(model: str, claim: str = CLAIM, **settings: Any) -> dict[str, Any]:
    return await jury_graph.ainvoke({"claim": claim}, context=ctx(model, **settings))


# ------------------------------------------------------------------ parsers and units


def test_parse_truth_reads_last_line_and_refuses_to_guess():
    assert parse_truth("Evidence agrees.\n**TRUE**") == "TRUE"
    assert parse_truth("So I say FALSE") == "FALSE"
    assert parse_truth("**False** is my view.\nThanks!") == "FALSE"
    for bad in ("", "TRUE or FALSE?", "It is NOT TRUE", "I am unsure."):
        assert isinstance(parse_truth(bad), ParseFailure)


def test_parse_confidence_accepts_fractions_and_percentages():
    assert parse_confidence("CONFIDENCE: 0.35") == 0.35
    assert parse_confidence("confidence = 80%") == 0.8
    assert parse_confidence("Confidence: 90") == 0.9
    assert isinstance(parse_confidence("quite sure"), ParseFailure)
    assert isinstance(parse_confidence("CONFIDENCE: 250"), ParseFailure)


def test_strategies_per_rule_and_round():
    assert [strategy_for(1, r) for r in (1, 2, 3)] == ["conditional", "direct", "direct"]
    assert [strategy_for(2, r) for r in (1, 2)] == ["search", "direct"]
    assert [strategy_for(3, r) for r in (1, 2)] == ["conditional", "search"]


def test_majority_and_tie_break_by_last_readable_speaker():
    assert majority(["TRUE", "FALSE", "FALSE"]) == (
        "FALSE",
        {"TRUE": 1, "FALSE": 2, "unparsed": 0},
        False,
    )
    assert majority(["FALSE", "TRUE"])[0:3:2] == ("TRUE", True)
    assert majority(["TRUE", "FALSE", None]) == (
        "FALSE",
        {"TRUE": 1, "FALSE": 1, "unparsed": 1},
        True,
    )
    assert majority([None, None])[0] is None


def test_checkable_filter():
    assert is_checkable("Paris is the capital of France.")
    for text in (
        "You should visit in spring.",
        "I think Paris is lovely.",
        "Is it worth it?",
        "Consider booking early.",
        "In my opinion the tower is ugly.",
        "Hope so.",
    ):
        assert not is_checkable(text)


def test_context_validation():
    with pytest.raises(ValueError):
        MADFactContext(debate_rule=4)
    with pytest.raises(ValueError):
        MADFactContext(n_evaluators=7)
    with pytest.raises(ValueError):
        MADFactContext(n_evaluators=2, roles=["critic", "critic"])
    with pytest.raises(ValueError):
        MADFactContext(roles=["judge"], n_evaluators=1)
    assert MADFactContext(n_evaluators=2, roles=["scientist", "critic"]).jury_roles() == [
        "scientist",
        "critic",
    ]
    assert MADFactContext().jury_roles() == ["general_public", "critic", "news_author"]


# ------------------------------------------------------------------ graph shape


def test_jury_is_a_real_subgraph_and_registered():
    assert dict(graph.get_subgraphs())["jury"] is jury_graph
    drawing = graph.get_graph(xray=True).draw_mermaid()
    for node in ("open_claim", "plan_turn", "search", "speak", "advance", "judge"):
        assert f"jury\\3a{node}" in drawing
    assert METHODS["mad-fact"].input_kind == "answer"
    assert load_method("mad-fact")[1] is MADFactContext
    assert load_method("single-verifier")[1] is SingleVerifierContext


# ------------------------------------------------------------------ clerk


async def test_clerk_drops_non_checkable_sentences(scripted, fake_tools):
    name, model = scripted(
        [
            clerk_rule(
                [
                    CLAIM,
                    "You should visit in spring.",
                    "I think it is beautiful.",
                    CLAIM2,
                    "the eiffel tower is in paris",
                ]
            ),
            confidence(0.9),
            opinion("TRUE"),
        ]
    )
    out = await ascore_answer(
        ANSWER, "Tell me about the Eiffel Tower.", model=model and name, merge_method="text"
    )
    assert [c["claim"] for c in out["claims"]] == [CLAIM, CLAIM2]
    assert out["dropped"] == ["You should visit in spring.", "I think it is beautiful."]
    clerk_prompt = next(p for p in model.prompts if CLERK in p)
    assert "advice" in clerk_prompt and ANSWER in clerk_prompt
    assert out["verdict"] == "FACTUAL"
    assert out["scores"]["precision"] == 1.0
    assert out["stop_reason"] == "scored"
    assert out["cost"]["clerk"]["llm_calls"] == 1
    assert out["cost"]["debater"]["llm_calls"] == 2 * (3 + 6)  # 3 confidences, 6 opinions
    assert out["errors"] == []


async def test_clerk_parse_failure_is_recorded_and_sentences_are_judged(scripted, fake_tools):
    rules = [(CLERK, "Here are the claims: Paris, tower."), confidence(0.9), opinion("TRUE")]
    name, model = scripted(rules)
    out = await ascore_answer(ANSWER, model=name, merge_method="text")
    assert [c["claim"] for c in out["claims"]] == [CLAIM, "It was completed in 1889."]
    assert out["split_without_model"] is True and out["dropped"] == ["You should visit in spring."]
    assert [e["kind"] for e in out["errors"]] == ["parse_error", "split_without_model"]
    assert "Paris, tower" in out["errors"][0]["raw"]
    assert "2 sentence claim(s) without the model" in out["errors"][1]["message"]
    assert out["cost"]["clerk"]["llm_calls"] == 1
    assert model.calls_with(OPINION) == 2 * 6 and out["verdict"] == "FACTUAL"


async def test_unreadable_clerk_on_an_empty_split_gives_no_claims(scripted, fake_tools):
    name, _ = scripted([(CLERK, "no JSON")])
    out = await ascore_answer("Maybe. You should go!", model=name, merge_method="text")
    assert out["claims"] == [] and out["stop_reason"] == "no_claims"
    assert out["split_without_model"] is True and out["verdict"] is None


async def test_clerk_listing_no_claim_falls_back_to_sentences(scripted, fake_tools):
    name, model = scripted([clerk_rule([]), confidence(0.9), opinion("TRUE")])
    out = await ascore_answer(ANSWER, model=name, merge_method="text")
    assert len(out["claims"]) == 2 and out["split_without_model"] is True
    assert [e["kind"] for e in out["errors"]] == ["split_without_model"]
    assert out["errors"][0]["message"].startswith("the clerk listed no claim: split into 2")
    opinions_only = await ascore_answer(
        "I think so. You should go!", model=scripted([clerk_rule([])])[0], merge_method="text"
    )
    assert opinions_only["claims"] == [] and opinions_only["errors"] == []
    assert opinions_only["split_without_model"] is False


def test_split_sentences_keeps_abbreviations_and_decimals():
    from factdebate.nodes.mad_fact.clerk import split_sentences

    text = "Dr. Smith moved to Washington D.C. in 1990. He was 1.9 m tall!  Was he?"
    assert split_sentences(text) == [
        "Dr. Smith moved to Washington D.C. in 1990.",
        "He was 1.9 m tall!",
        "Was he?",
    ]


# ------------------------------------------------------------------ debate rules


async def test_rule1_searches_only_when_unsure_then_discusses(scripted, fake_tools):
    name, model = scripted(
        [confidence(0.3, "Critic"), confidence(0.9), query_by_role(), opinion("TRUE")]
    )
    out = await run_jury(name, debate_rule=1)
    result = out["claim_results"][0]
    assert result["verdict"] == "TRUE" and result["rounds"] == 2
    assert result["stop_reason"] == "round_limit"
    assert fake_tools["search"] == ["Critic Eiffel Tower"]
    turns = out["transcript"]
    assert [(t["round"], t["agent"], t["strategy"]) for t in turns] == [
        (1, "general_public", "conditional"),
        (1, "critic", "conditional"),
        (1, "news_author", "conditional"),
        (2, "general_public", "direct"),
        (2, "critic", "direct"),
        (2, "news_author", "direct"),
    ]
    assert [t["query"] for t in turns] == ["", "Critic Eiffel Tower", "", "", "", ""]
    assert turns[1]["confidence"] == 0.3
    assert model.calls_with(CONF) == 3
    # later speakers see the shared knowledge base and the message pool
    last = [p for p in model.prompts if OPINION in p][-1]
    assert "[Critic Eiffel Tower]" in last and "Round 1, Critic: Reasoned." in last


async def test_unreadable_confidence_is_recorded_and_triggers_a_search(scripted, fake_tools):
    name, _ = scripted([(CONF, "I am fairly sure."), query_by_role(), opinion("TRUE")])
    out = await run_jury(name, n_evaluators=1, max_rounds=1)
    assert fake_tools["search"] == ["Member of the Public Eiffel Tower"]
    assert [e["stage"] for e in out["errors"]] == ["confidence"]


async def test_rule2_mandatory_search_in_round_one(scripted, fake_tools):
    name, model = scripted([query_by_role(), opinion("FALSE")])
    out = await run_jury(name, debate_rule=2)
    assert out["claim_results"][0]["verdict"] == "FALSE"
    assert model.calls_with(CONF) == 0
    assert fake_tools["search"] == [
        "Member of the Public Eiffel Tower",
        "Critic Eiffel Tower",
        "News Author Eiffel Tower",
    ]
    assert [t["strategy"] for t in out["transcript"]] == ["search"] * 3 + ["direct"] * 3
    assert out["claim_results"][0]["queries"] == fake_tools["search"]
    assert all(t["evidence"] for t in out["transcript"][:3])


async def test_rule3_stops_after_round_one_on_agreement(scripted, fake_tools):
    name, model = scripted([confidence(0.95), opinion("TRUE")])
    out = await run_jury(name, debate_rule=3)
    result = out["claim_results"][0]
    assert result["rounds"] == 1 and result["stop_reason"] == "agreement"
    assert len(out["transcript"]) == 3 and model.calls_with(OPINION) == 3
    assert fake_tools["search"] == []


async def test_rule3_without_agreement_searches_before_round_two(scripted, fake_tools):
    name, _ = scripted(
        [confidence(0.95), query_by_role(), opinion("FALSE", "Critic"), opinion("TRUE")]
    )
    out = await run_jury(name, debate_rule=3)
    result = out["claim_results"][0]
    assert result["rounds"] == 2 and result["stop_reason"] == "round_limit"
    assert result["verdict"] == "TRUE" and result["votes"] == {"TRUE": 2, "FALSE": 1, "unparsed": 0}
    assert [t["strategy"] for t in out["transcript"]] == ["conditional"] * 3 + ["search"] * 3
    assert len(fake_tools["search"]) == 3


# ------------------------------------------------------------------ queries


async def test_repeated_query_is_recorded_and_never_run(scripted, fake_tools):
    name, model = scripted([(QUERY, "[Eiffel Tower location]"), opinion("TRUE")])
    out = await run_jury(name, debate_rule=2, max_rounds=1)
    assert fake_tools["search"] == ["Eiffel Tower location"]
    repeats = [e for e in out["errors"] if e["kind"] == "repeated_query"]
    assert len(repeats) == 4  # jurors 2 and 3, two attempts each
    assert [t["query"] for t in out["transcript"]] == ["Eiffel Tower location", "", ""]
    assert model.calls_with(QUERY) == 5


async def test_repeated_query_is_replaced_on_a_second_try(scripted, fake_tools):
    def query(p: str) -> str:
        # repeats the first query until the prompt lists it as rejected too
        return (
            "[Eiffel Tower city]"
            if p.count("- [eiffel tower LOCATION]") >= 2
            else ("[eiffel tower LOCATION]")
        )

    name, _ = scripted([(QUERY, query), opinion("TRUE")])
    out = await run_jury(name, debate_rule=2, max_rounds=1, n_evaluators=2)
    assert fake_tools["search"] == ["eiffel tower LOCATION", "Eiffel Tower city"]
    assert [e["kind"] for e in out["errors"]] == ["repeated_query"]


async def test_search_failure_is_recorded(scripted, fake_tools):
    from factdebate.tools import dispatch

    def broken(query: str, k: int) -> list[Any]:
        raise ConnectionError("offline")

    dispatch.override_tool("search", broken)
    name, _ = scripted([query_by_role(), opinion("TRUE")])
    out = await run_jury(name, debate_rule=2, max_rounds=1, n_evaluators=1)
    assert out["claim_results"][0]["verdict"] == "TRUE"
    assert [e["kind"] for e in out["errors"]] == ["tool_error"]


# ------------------------------------------------------------------ judge


async def test_tie_goes_to_last_speaker(scripted, fake_tools):
    name, _ = scripted(
        [confidence(0.9), opinion("TRUE", "Member of the Public"), opinion("FALSE", "Critic")]
    )
    out = await run_jury(name, n_evaluators=2)
    result = out["claim_results"][0]
    assert result["verdict"] == "FALSE" and result["tie_break"] is True


async def test_unreadable_opinion_is_recorded_not_counted(scripted, fake_tools):
    name, _ = scripted(
        [
            confidence(0.9),
            opinion("TRUE", "Member of the Public"),
            (lambda p: OPINION in p and "Critic on a" in p, "Hard to say."),
            opinion("FALSE", "News Author"),
        ]
    )
    out = await run_jury(name, max_rounds=1)
    result = out["claim_results"][0]
    assert result["votes"] == {"TRUE": 1, "FALSE": 1, "unparsed": 1}
    assert result["verdict"] == "FALSE" and result["tie_break"]
    assert [(e["agent"], e["kind"]) for e in out["errors"]] == [("critic", "parse_error")]
    assert out["transcript"][1]["label"] is None


async def test_no_readable_opinion_gives_no_verdict(scripted, fake_tools):
    name, _ = scripted([confidence(0.9), (OPINION, "Maybe.")])
    out = await run_jury(name, max_rounds=1)
    assert out["claim_results"][0]["verdict"] is None
    assert out["errors"][-1]["kind"] == "no_verdict"


# ------------------------------------------------------------------ answer level


async def test_claims_are_checked_concurrently_up_to_the_cap(scripted, fake_tools):
    claims = [f"Claim number {i} is a fact." for i in range(5)]
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def slow(prompt: str) -> str:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return "Known.\n**FALSE**" if "number 3" in prompt else "Known.\n**TRUE**"

    name, _ = scripted([clerk_rule(claims), query_by_role(), (OPINION, slow)])
    out = await ascore_answer(
        " ".join(claims),
        model=name,
        merge_method="text",
        debate_rule=2,
        max_rounds=1,
        n_evaluators=1,
        claim_concurrency=2,
        query_attempts=1,
    )
    assert state["max"] == 2
    assert [c["claim_id"] for c in out["claims"]] == [0, 1, 2, 3, 4]
    assert [c["verdict"] for c in out["claims"]] == ["TRUE", "TRUE", "TRUE", "FALSE", "TRUE"]
    assert out["scores"]["precision"] == pytest.approx(0.8)
    assert out["verdict"] == "NOT FACTUAL"
    assert {t["claim_id"] for t in out["transcript"]} == set(range(5))


async def test_weighted_scores_with_supplied_references(scripted, fake_tools):
    a, b, c, e = (
        "Paris is the capital of France.",
        "Paris has two million inhabitants.",
        "The Seine flows through Paris.",
        "Paris hosted the 2024 Olympics.",
    )
    refs = ["Reference one.", "Reference two.", "Reference three."]
    answer = "My answer about Paris."
    name, model = scripted(
        [
            clerk_rule([a, b, c], "<answer>\nReference one."),
            clerk_rule([a, b], "<answer>\nReference two."),
            clerk_rule([a, "The Louvre is in Paris."], "<answer>\nReference three."),
            clerk_rule([a, b, c, e], f"<answer>\n{answer}"),
            (lambda p: OPINION in p and c in p.split("What the jurors")[0], "No.\n**FALSE**"),
            opinion("TRUE"),
        ]
    )
    out = await ascore_answer(
        answer,
        "Tell me about Paris.",
        refs,
        model=name,
        merge_method="text",
        debate_rule=2,
        max_rounds=1,
        n_evaluators=1,
    )
    s = out["scores"]
    assert [c_["verdict"] for c_ in out["claims"]] == ["TRUE", "TRUE", "FALSE", "TRUE"]
    assert s["weights"] == [4, 3, 2, 1] and s["golden_mass"] == 11
    assert s["weighted_precision"] == pytest.approx(0.8)
    assert s["recall_at_gamma"] == pytest.approx(8 / 8.8)
    assert [g["weight"] for g in out["golden"]] == [4, 3, 2, 2]
    assert out["cost"]["clerk"]["llm_calls"] == 4
    assert "F1@0.8" in out["justification"]


async def test_expert_models_write_references(scripted, fake_tools):
    expert_a, _ = scripted([("Answer the question below", "Paris is the capital.")])
    expert_b, _ = scripted([("Answer the question below", "Paris is the capital city.")])
    name, _ = scripted(
        [
            clerk_rule(["Paris is the capital of France."]),
            opinion("TRUE"),
        ]
    )
    out = await ascore_answer(
        "Paris is the capital.",
        "What is the capital of France?",
        model=name,
        merge_method="text",
        debate_rule=2,
        max_rounds=1,
        n_evaluators=1,
        expert_models=[expert_a, expert_b],
    )
    assert out["scores"]["n_references"] == 2
    assert out["golden"][0]["frequency"] == 2 and out["golden"][0]["weight"] == 3
    assert out["scores"]["recall_at_gamma"] == 1.0
    assert out["cost"]["expert"]["llm_calls"] == 2


# ------------------------------------------------------------------ baseline and evaluation


async def test_single_verifier_searches_new_queries_then_rates(scripted, fake_tools):
    def query(p: str) -> str:
        return "[tower height]" if "[tower location]" in p else "[tower location]"

    name, model = scripted([("Write the next search query", query), (RATE, "Wrong.\n**FALSE**")])
    out = await verifier_graph.ainvoke(
        {"claim": CLAIM}, context=SingleVerifierContext(model=name, search_steps=2)
    )
    assert out["verdict"] == "FALSE" and out["rounds"] == 2
    assert fake_tools["search"] == ["tower location", "tower height"]
    assert "[tower height]" in next(p for p in model.prompts if RATE in p)


async def test_checker_evaluation_gives_per_class_scores(scripted, fake_tools):
    items = [
        AtomicClaimItem("1", CLAIM, True),
        AtomicClaimItem("2", "Paris is in Peru.", False),
        AtomicClaimItem("3", "The Seine is in Rome.", False),
    ]
    name, _ = scripted(
        [
            (lambda p: OPINION in p and "Peru" in p, "No.\n**FALSE**"),
            confidence(0.9),
            opinion("TRUE"),
        ]
    )
    report = await aevaluate_checker(
        items, "mad-fact", model=name, max_rounds=1, n_evaluators=1, merge_method="text"
    )
    m = report["metrics"]
    assert m["per_class"]["TRUE"]["precision"] == 0.5 and m["per_class"]["TRUE"]["recall"] == 1
    assert m["per_class"]["FALSE"]["precision"] == 1 and m["per_class"]["FALSE"]["recall"] == 0.5
    assert [p["pred"] for p in report["predictions"]] == [True, False, True]
    base = await aevaluate_checker(items, "single-verifier", model=name, search_steps=0)
    assert base["metrics"]["unparsed"] == 3  # the scripted default never says TRUE/FALSE


async def test_checker_evaluation_on_factcheck_bench_items(scripted, fake_tools):
    from factdebate.datasets import DatasetError, load_factcheck_bench, load_factool_qa

    try:
        items = load_factcheck_bench().items[:2] + load_factool_qa().items[:2]
    except (DatasetError, FileNotFoundError) as exc:
        pytest.skip(f"datasets not available: {exc}")
    name, _ = scripted([confidence(0.9), opinion("TRUE")])
    report = await aevaluate_checker(items, model=name, max_rounds=1, n_evaluators=1)
    assert report["metrics"]["n"] == 4
    assert set(report["metrics"]["per_class"]) == {"TRUE", "FALSE"}


# ------------------------------------------------------------------ end to end


@pytest.mark.slow
async def test_end_to_end_on_embedded_model(fake_tools):
    out = await ascore_answer(
        "The Eiffel Tower is in Paris. It opened in 1889.",
        "Where is the Eiffel Tower?",
        model="local",
        max_rounds=1,
        n_evaluators=2,
        max_output_tokens=96,
        max_claims=2,
        merge_method="text",
        claim_concurrency=2,
    )
    assert set(out) >= {*CONTRACT_KEYS, "claims", "scores"}
    assert out["stop_reason"] in ("scored", "no_claims")
    assert out["cost"]["total"]["llm_calls"] >= 1
    assert all(c["verdict"] in ("TRUE", "FALSE", None) for c in out["claims"])
    # SmolLM2 often finds no claims at all: run the jury on one claim as well.
    jury = await jury_graph.ainvoke(
        {"claim": CLAIM},
        context=MADFactContext(model="local", max_rounds=1, n_evaluators=2, max_output_tokens=96),
    )
    result = jury["claim_results"][0]
    assert result["verdict"] in ("TRUE", "FALSE", None) and result["rounds"] == 1
    assert [t["agent"] for t in jury["transcript"]] == ["general_public", "critic"]
    assert jury["cost"]["debater"]["llm_calls"] >= 4


def test_input_output_and_context_schemas_render():
    """Studio and the server build their forms from these JSON schemas."""
    assert set(graph.get_input_jsonschema()["properties"]) == {"question", "answer", "references"}
    assert {"verdict", "claims", "scores", "transcript", "cost", "errors"} <= set(
        graph.get_output_jsonschema()["properties"]
    )
    assert "claim" in jury_graph.get_input_jsonschema()["properties"]
    assert "claim_results" in jury_graph.get_output_jsonschema()["properties"]
    assert "search_steps" in verifier_graph.get_context_jsonschema()["properties"]
    ctx_props = graph.get_context_jsonschema()["properties"]
    assert {"debate_rule", "n_evaluators", "roles", "gamma", "expert_models"} <= set(ctx_props)
