"""A paused review goes on only with a decision, checked against what the thread stored."""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command

from factdebate.api import averify, build_context
from factdebate.graphs.registry import load_method
from factdebate.nodes.review import REVIEW_NODE, add_review, averitec_labels, pending_review
from factdebate.runs.checkpoints import open_checkpointer
from tests.nodes.baselines.test_graph import CLAIM, mad_rules

JUDGE_STOP = "Affirmative is right.\n**SUPPORTS**"


async def _mad_thread(db: str, name: str, thread: str) -> None:
    """Pause MAD thread ``thread`` in ``db`` for review."""
    await averify(CLAIM, "mad", model=name, review=True, thread=thread, checkpoint=db)


async def _go_on(db: str, thread: str, value: Any, **settings: Any) -> Any:
    """Run ``thread`` on with ``value`` (a Command, or None) under ``settings``; its state."""
    async with open_checkpointer(db) as saver:
        graph, _ = load_method("mad")
        durable = graph.builder.compile(checkpointer=saver, name="mad")
        config: Any = {"configurable": {"thread_id": thread}}
        await durable.ainvoke(value, config, context=build_context("mad", **settings))
        return await durable.aget_state(config)


async def test_a_resume_without_review_in_its_settings_is_still_a_decision(
    scripted, fake_tools, tmp_path
):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await _mad_thread(db, name, "t1")
    decision = Command(resume={"verdict": "REFUTES", "note": "a replica"})
    state = await _go_on(db, "t1", decision, model=name)  # review off in the resuming run
    assert not state.next and state.values["verdict"] == "REFUTES"
    assert state.values["review"]["status"] == "overruled"
    assert state.values["review"]["note"] == "a replica"
    assert state.values["decided_by"]["agent"] == "reviewer"


async def test_going_on_without_a_decision_leaves_the_thread_waiting(
    scripted, fake_tools, tmp_path
):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await _mad_thread(db, name, "t1")
    for _ in range(2):  # a plain continuation, with review off, is no decision
        state = await _go_on(db, "t1", None, model=name)
        assert state.next == (REVIEW_NODE,) and pending_review(state) is not None
        assert state.values["review"]["status"] == "pending"  # no decision
    again = await averify(CLAIM, "mad", model=name, thread="t1", checkpoint=db)  # no review
    assert again["status"] == "awaiting_review" and again["proposed"]["verdict"] == "SUPPORTS"
    bad = await _go_on(db, "t1", Command(resume={"verdict": "MAYBE"}), model=name)
    assert pending_review(bad)["refused"].startswith("unknown verdict 'MAYBE'")
    done = await _go_on(db, "t1", Command(resume={"approve": True}), model=name)
    assert done.values["review"]["status"] == "approved" and done.values["verdict"] == "SUPPORTS"


class _State(TypedDict, total=False):
    verdict: str | None
    justification: str
    review: dict[str, Any]
    decided_by: dict[str, Any]
    rounds: int
    stop_reason: str


async def _propose(state: _State) -> dict[str, Any]:
    return {"verdict": "SUPPORTS", "rounds": 1, "stop_reason": "consensus"}


async def test_the_choices_are_the_ones_the_thread_paused_with():
    """Paused with three labels, a resume whose settings allow four cannot pick the fourth."""
    builder: Any = StateGraph(_State)
    builder.add_node("propose", _propose)
    builder.add_edge(START, "propose")
    builder.add_edge("propose", add_review(builder, averitec_labels))
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    paused = await graph.ainvoke({}, config, context={"review": True, "labels": 3})
    (request,) = [i.value for i in paused["__interrupt__"]]
    assert request["choices"] == ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    four = {"review": True, "labels": 4}
    again = await graph.ainvoke(Command(resume={"verdict": "CONFLICTING"}), config, context=four)
    (request,) = [i.value for i in again["__interrupt__"]]
    assert "unknown verdict 'CONFLICTING'" in request["refused"]
    assert request["choices"] == ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    done = await graph.ainvoke(Command(resume={"verdict": "refutes"}), config, context={})
    assert done["verdict"] == "REFUTES" and done["review"]["status"] == "overruled"
    late = await graph.ainvoke(Command(resume={"approve": True}), config, context=four)
    assert late == done  # nothing waits any more: a late resume changes nothing
    assert (await graph.aget_state(config)).values["review"] == done["review"]
