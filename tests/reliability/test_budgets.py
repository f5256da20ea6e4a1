"""Budgets stop every multi-round method at a round boundary, keeping its work; answers too."""

from __future__ import annotations

from typing import Any

from factdebate.bench.judging.report import compute_metrics, render_report
from factdebate.graphs.jury import graph as jury_graph
from factdebate.graphs.madam_rag import graph as madam_graph
from factdebate.graphs.registry import load_method
from factdebate.nodes.madam_rag.context import MadamContext
from tests.nodes.baselines.test_graph import CLAIM, mad_rules, madke_rules
from tests.nodes.debate_cv.test_graph import EVIDENCE, rules, stop_at
from tests.nodes.debate_cv.test_graph import run as run_debate_cv
from tests.nodes.mad_fact.test_graph import confidence, ctx, opinion, query_by_role
from tests.nodes.madam_rag.test_graph import FAKE, NBA, PROF, QUESTION, jordan_rules


def assert_budget_stop(out: dict[str, Any]) -> None:
    assert out["stop_reason"] == "budget_exhausted"
    assert out["verdict"] is None
    budget = [e for e in out["errors"] if e["kind"] == "budget_exhausted"]
    assert budget and "budget of" in budget[0]["message"]


async def test_madam_rag_stops_after_round_one_and_keeps_its_answers(scripted):
    # agents change nothing, yet 3 agents + aggregator = 4 calls reach a budget of 4
    name, model = scripted(jordan_rules(drop=("1998",)))
    out = await madam_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA, PROF, FAKE]},
        context=MadamContext(model=name, max_rounds=3, max_llm_calls=4),
    )
    assert out["stop_reason"] == "budget_exhausted"
    assert out["rounds"] == 1 and len(model.prompts) == 4
    assert sorted(out["answers"]) == ["1956", "1963"]  # the round-1 answers are kept
    assert any(e["kind"] == "budget_exhausted" for e in out["errors"])


async def test_madam_rag_without_budget_pressure_runs_on(scripted):
    name, _ = scripted(jordan_rules(drop=("1998",)))
    out = await madam_graph.ainvoke(
        {"question": QUESTION, "documents": [NBA, PROF, FAKE]},
        context=MadamContext(model=name, max_rounds=3, max_llm_calls=0),
    )
    assert out["stop_reason"] == "answers_stable" and out["rounds"] == 2


async def test_debate_cv_stops_at_the_round_boundary(scripted):
    name, model = scripted(rules(stop_at(3)))
    out = await run_debate_cv(name, EVIDENCE, max_rounds=3, max_llm_calls=3)
    assert_budget_stop(out)
    assert out["rounds"] == 1
    assert [t["agent"] for t in out["transcript"]] == ["affirmative", "negative", "moderator"]
    assert len(model.prompts) == 3


async def test_debate_cv_budget_also_skips_the_final_verdict(scripted):
    name, model = scripted(rules(stop_at(9)))
    out = await run_debate_cv(name, EVIDENCE, max_rounds=1, max_llm_calls=3)
    assert_budget_stop(out)
    assert model.calls_with("reached its round limit") == 0


async def test_mad_stops_when_the_judge_wants_more_but_the_budget_is_spent(scripted, fake_tools):
    name, model = scripted(mad_rules("Unclear.\nCONTINUE"))
    graph, context_cls = load_method("mad")
    out = await graph.ainvoke(
        {"claim": CLAIM}, context=context_cls(model=name, max_rounds=3, max_llm_calls=3)
    )
    assert_budget_stop(out)
    assert out["rounds"] == 1 and len(model.prompts) == 3
    assert len(out["transcript"]) == 2


async def test_madke_stops_before_another_round_or_the_judge(scripted, fake_tools):
    name, model = scripted(madke_rules("SUPPORTS", "REFUTES"))
    graph, context_cls = load_method("madke")
    out = await graph.ainvoke(
        {"claim": CLAIM}, context=context_cls(model=name, max_rounds=3, max_llm_calls=2)
    )
    assert_budget_stop(out)
    assert out["rounds"] == 1 and len(out["transcript"]) == 2
    assert model.calls_with("You judge") == 0


async def test_madke_consensus_within_budget_is_not_a_budget_stop(scripted, fake_tools):
    name, _ = scripted(madke_rules("SUPPORTS", "SUPPORTS"))
    graph, context_cls = load_method("madke")
    out = await graph.ainvoke({"claim": CLAIM}, context=context_cls(model=name, max_llm_calls=2))
    assert out["stop_reason"] == "consensus"


async def test_mad_fact_jury_decides_from_round_one_when_the_budget_is_spent(scripted, fake_tools):
    name, model = scripted([confidence(0.9), query_by_role(), opinion("TRUE")])
    out = await jury_graph.ainvoke(
        {"claim": "The Eiffel Tower is in Paris."},
        context=ctx(name, debate_rule=1, max_rounds=2, max_llm_calls=6),
    )
    result = out["claim_results"][0]
    assert result["stop_reason"] == "budget_exhausted"
    assert result["verdict"] == "TRUE"  # majority of the round that was held
    assert result["rounds"] == 1
    assert {t["round"] for t in out["transcript"]} == {1}
    assert any(e["kind"] == "budget_exhausted" for e in out["errors"])
    assert len(model.prompts) == 6


def test_bench_metrics_count_budget_stops(tmp_path):
    rows = [
        {
            "id": "1",
            "gold": "SUPPORTS",
            "prediction": None,
            "stop_reason": "budget_exhausted",
            "rounds": 1,
            "errors": [{"kind": "budget_exhausted"}],
            "cost": {},
            "latency_s": 1.0,
        },
        {
            "id": "2",
            "gold": "SUPPORTS",
            "prediction": "SUPPORTS",
            "stop_reason": "consensus",
            "rounds": 1,
            "errors": [],
            "cost": {},
            "latency_s": 1.0,
        },
    ]
    metrics = compute_metrics(rows, ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"])
    assert metrics["budget_exhausted"] == 1
    assert metrics["stop_reasons"]["budget_exhausted"] == 1
    report = render_report(metrics, {"method": "tool-mad", "dataset": "x", "server_url": None})
    assert "budget (budget_exhausted): 1" in report


async def test_mad_fact_budget_bounds_the_whole_answer(scripted, fake_tools):
    """30 claims x 6 jurors share one budget: claims left when it runs out stay unchecked."""
    import json

    from factdebate.bench.running.long_form import ascore_answer

    claims = [f"Claim number {i} is a fact." for i in range(30)]
    name, model = scripted(
        [
            ("You are the clerk of a fact-checking jury", json.dumps({"claims": claims})),
            ("how confident are you", "I know this.\nCONFIDENCE: 0.95"),
            ("Give your opinion on the claim", "Known.\n**TRUE**"),
        ]
    )
    out = await ascore_answer(
        " ".join(claims),
        model=name,
        merge_method="text",
        n_evaluators=6,
        max_rounds=2,
        claim_concurrency=4,
        max_llm_calls=80,
    )
    calls = out["cost"]["total"]["llm_calls"]
    assert calls == len(model.prompts)
    # one jury round is 12 calls, a whole jury 18: the overshoot is at most the juries that
    # were running (claim_concurrency of them) when the budget ran out
    assert calls <= 80 + 4 * 18, calls
    results = {c["claim_id"]: c for c in out["claims"]}
    assert sorted(results) == list(range(30))
    unchecked = [r for r in results.values() if r["rounds"] == 0]
    assert len(unchecked) >= 20 and all(r["verdict"] is None for r in unchecked)
    assert all(r["stop_reason"] == "budget_exhausted" for r in unchecked)
    cut_short = [r for r in results.values() if r["rounds"] == 1]
    assert cut_short and all(r["stop_reason"] == "budget_exhausted" for r in cut_short)
    assert out["stop_reason"] == "budget_exhausted"
    assert out["verdict"] is None
    budget = [e for e in out["errors"] if e["kind"] == "budget_exhausted"]
    left = [e for e in budget if "left unchecked" in e["message"]]
    assert len(left) == len(unchecked)
