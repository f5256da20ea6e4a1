"""Review states: a paused result holds no verdict, a decided bench row holds the decision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from factdebate.api import averify, build_context
from factdebate.bench import read_results
from factdebate.bench.judging.page import item_page
from factdebate.bench.running.review_queue import apply_decision
from factdebate.graphs.registry import load_method
from factdebate.nodes.review import NEEDS_THREAD, REVIEW_NODE, ReviewError
from factdebate.review.resume import aresume
from factdebate.runs.checkpoints import open_checkpointer
from tests.bench.test_review_queue import review_bench
from tests.nodes.baselines.test_graph import CLAIM, mad_rules

JUDGE_STOP = "STOP. Affirmative is right.\n**SUPPORTS**"


async def _values(db: str, thread: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    graph, _ = load_method("mad")
    async with open_checkpointer(db, existing=True) as saver:
        state = await graph.builder.compile(checkpointer=saver).aget_state(
            {"configurable": {"thread_id": thread}}
        )
    return dict(state.values), tuple(state.next)


async def test_a_paused_thread_holds_a_proposal_and_no_verdict(scripted, fake_tools, tmp_path):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    paused = await averify(CLAIM, "mad", model=name, review=True, thread="t1", checkpoint=db)
    assert paused["status"] == "awaiting_review" and paused["proposed"]["verdict"] == "SUPPORTS"
    values, waiting_at = await _values(db, "t1")
    assert waiting_at == (REVIEW_NODE,)
    assert values["verdict"] is None  # a client reading only the values sees no decision
    assert values["proposed_verdict"] == "SUPPORTS"
    assert values["review"] == {"status": "pending", "proposed": "SUPPORTS"}
    assert values["decided_by"]["agent"] == "judge"  # who proposed it
    done = await aresume("t1", checkpoint=db, verdict="REFUTES", note="a replica", model=name)
    assert done["verdict"] == "REFUTES" and done["proposed_verdict"] == "SUPPORTS"
    assert done["review"]["status"] == "overruled" and done["review"]["proposed"] == "SUPPORTS"
    assert done["decided_by"]["agent"] == "reviewer"
    values, waiting_at = await _values(db, "t1")
    assert waiting_at == () and values["verdict"] == "REFUTES"


async def test_an_approval_makes_the_proposal_the_verdict(scripted, fake_tools, tmp_path):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await averify(CLAIM, "mad", model=name, review=True, thread="t2", checkpoint=db)
    done = await aresume("t2", checkpoint=db, approve=True, model=name)
    assert done["verdict"] == "SUPPORTS" and done["review"]["status"] == "approved"
    assert done["decided_by"]["agent"] == "judge"  # an approval keeps the method's provenance


async def test_a_run_without_review_has_no_review_keys(scripted, fake_tools, tmp_path):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    out = await averify(CLAIM, "mad", model=name)
    assert out["verdict"] == "SUPPORTS"
    assert "review" not in out and "proposed_verdict" not in out


async def test_review_without_a_checkpointer_is_refused_not_paused(scripted, fake_tools):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    graph, _ = load_method("mad")
    context = build_context("mad", model=name, review=True)
    with pytest.raises(ReviewError) as caught:
        await graph.ainvoke({"claim": CLAIM}, context=context)
    assert str(caught.value) == NEEDS_THREAD and "\n" not in NEEDS_THREAD
    stored = graph.builder.compile(checkpointer=InMemorySaver())
    out = await stored.ainvoke(
        {"claim": CLAIM}, {"configurable": {"thread_id": "x"}}, context=context
    )
    assert out["__interrupt__"] and out["verdict"] is None  # with a thread it pauses


def test_a_review_bench_scores_decided_items_and_rewrites_decided_rows(tmp_path: Path, scripted):
    run, _ = review_bench(tmp_path, scripted)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["review"]["awaiting"] == 2 and metrics["review"]["decided"] == 0
    assert metrics["n"] == 0  # nothing is scored before a person decides
    assert "**Awaiting review:** 2 of 2 verdicts" in (run / "report.md").read_text()
    page = (run / "report.html").read_text()
    assert 'id="awaiting-review"' in page and "proposed, awaiting review" in page
    rows = {r["gold"]: r for r in read_results(run / "results.jsonl")}
    wrong = rows["REFUTES"]  # the scripted model proposed SUPPORTS for both
    assert wrong["result"]["verdict"] is None and wrong["result"]["review"]["status"] == "pending"
    item = run / item_page(wrong["id"])
    assert "Proposed:" in item.read_text() and "Awaiting a person" in item.read_text()

    apply_decision(run, str(wrong["id"]), {"verdict": "REFUTES", "note": "checked"})
    decided = {r["gold"]: r for r in read_results(run / "results.jsonl")}["REFUTES"]
    assert decided["prediction"] == "REFUTES"
    result = decided["result"]  # the item's whole result, as decided
    assert result["verdict"] == "REFUTES" and result["review"]["status"] == "overruled"
    assert result["review"]["note"] == "checked" and result["decided_by"]["agent"] == "reviewer"
    assert decided["review"]["thread"]  # where it waited is kept
    shown = item.read_text()
    assert "Reviewed by a person" in shown and "overruled" in shown and "Proposed:" not in shown
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["review"]["awaiting"] == 1 and metrics["n"] == 1
    assert metrics["accuracy"] == pytest.approx(1.0)
    assert "**Awaiting review:** 1 of 2 verdicts" in (run / "report.md").read_text()

    apply_decision(run, str(rows["SUPPORTS"]["id"]), {"approve": True})
    metrics = json.loads((run / "metrics.json").read_text())
    assert "review" not in metrics and metrics["n"] == 2
    assert "Awaiting review" not in (run / "report.md").read_text()
    assert 'id="awaiting-review"' not in (run / "report.html").read_text()
