"""The review request is LangChain's human-in-the-loop request; decisions map as documented."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain.agents.middleware.human_in_the_loop import HITLRequest, HITLResponse
from langgraph.types import Command
from pydantic import TypeAdapter

from factdebate.api import averify, build_context
from factdebate.graphs.registry import load_method
from factdebate.nodes.review import REVIEW_NODE, ReviewError, pending_review, read_decision
from factdebate.runs.checkpoints import open_checkpointer
from tests.nodes.baselines.test_graph import CLAIM, mad_rules

with warnings.catch_warnings():  # the Agent Inbox's schema, kept in langgraph for old code
    warnings.simplefilter("ignore")
    from langgraph.prebuilt.interrupt import HumanInterrupt, HumanResponse

JUDGE_STOP = "Affirmative is right.\n**SUPPORTS**"
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


def check_request(request: dict[str, Any]) -> None:
    """``request`` validates as LangChain's HITLRequest and as the Agent Inbox's HumanInterrupt."""
    hitl = TypeAdapter(HITLRequest).validate_python(request)
    assert set(HITLRequest.__required_keys__) <= set(request)
    assert hitl["review_configs"][0]["action_name"] == hitl["action_requests"][0]["name"]
    old = TypeAdapter(HumanInterrupt).validate_python(request)
    assert set(HumanInterrupt.__required_keys__) <= set(request)
    assert old["action_request"]["action"] == hitl["action_requests"][0]["name"]


@pytest.mark.parametrize(
    ("sent", "decided"),
    [
        ({"decisions": [{"type": "approve"}]}, {"approve": True, "verdict": None, "note": ""}),
        (
            {
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {
                            "name": "mad",
                            "args": {"verdict": "refutes", "note": "a replica"},
                        },
                    }
                ]
            },
            {"approve": False, "verdict": "REFUTES", "note": "a replica"},
        ),
        (
            {"decisions": [{"type": "reject", "message": "Not enough info - no source"}]},
            {"approve": False, "verdict": "NOT ENOUGH INFO", "note": "no source"},
        ),
        (
            {"decisions": [{"type": "respond", "message": "REFUTES"}]},
            {"approve": False, "verdict": "REFUTES", "note": ""},
        ),
        ([{"type": "accept", "args": None}], {"approve": True, "verdict": None, "note": ""}),
        (
            [{"type": "edit", "args": {"action": "mad", "args": {"verdict": "REFUTES"}}}],
            {"approve": False, "verdict": "REFUTES", "note": ""},
        ),
        (
            [{"type": "response", "args": "refutes: the photo is older"}],
            {"approve": False, "verdict": "REFUTES", "note": "the photo is older"},
        ),
        (
            {"verdict": "REFUTES", "note": "own format"},
            {"verdict": "REFUTES", "note": "own format"},
        ),
    ],
)
def test_each_decision_kind_decides_what_the_reviewer_chose(sent: Any, decided: dict[str, Any]):
    if isinstance(sent, dict) and "decisions" in sent:
        TypeAdapter(HITLResponse).validate_python(sent)  # what LangChain clients send
    elif isinstance(sent, list):
        TypeAdapter(list[HumanResponse]).validate_python(sent)  # what the Agent Inbox sends
    got = read_decision(sent, LABELS)
    assert {k: got[k] for k in decided} == decided


@pytest.mark.parametrize(
    ("sent", "why"),
    [
        ({"decisions": [{"type": "reject"}]}, "decides nothing without a verdict"),
        ({"decisions": [{"type": "reject", "message": "looks wrong"}]}, "verdict first"),
        ({"decisions": [{"type": "respond", "message": "FACTUALISH"}]}, "verdict first"),
        ([{"type": "ignore", "args": None}], "ignore does not decide"),
        ({"decisions": [{"type": "approve"}, {"type": "approve"}]}, "exactly one decision"),
        ({"decisions": []}, "exactly one decision"),
        ({"decisions": [{"type": "edit", "edited_action": {"name": "mad", "args": {}}}]}, "edit"),
        (
            {
                "decisions": [
                    {"type": "edit", "edited_action": {"name": "m", "args": {"verdict": "MAYBE"}}}
                ]
            },
            "unknown verdict",
        ),
        ({"decisions": [{"type": "shrug"}]}, "unknown decision type"),
    ],
)
def test_a_decision_that_names_no_choice_is_refused(sent: Any, why: str):
    with pytest.raises(ReviewError, match=why):
        read_decision(sent, LABELS)


def test_free_answers_take_a_response_but_not_a_bare_reject():
    got = read_decision({"decisions": [{"type": "respond", "message": "Paris; Lyon"}]}, None)
    assert got["verdict"] == "Paris; Lyon"
    with pytest.raises(ReviewError, match="list of answers"):
        read_decision({"decisions": [{"type": "reject", "message": "wrong"}]}, None)


def test_factual_is_not_read_from_not_factual():
    got = read_decision(
        [{"type": "response", "args": "not factual: a date is wrong"}], ("FACTUAL", "NOT FACTUAL")
    )
    assert got["verdict"] == "NOT FACTUAL" and got["note"] == "a date is wrong"


async def _state(db: str, thread: str, value: Any, name: str) -> Any:
    async with open_checkpointer(db) as saver:
        graph, _ = load_method("mad")
        durable = graph.builder.compile(checkpointer=saver, name="mad")
        config: Any = {"configurable": {"thread_id": thread}}
        if value is not None:
            context = build_context("mad", model=name, review=True)
            await durable.ainvoke(Command(resume=value), config, context=context)
        return await durable.aget_state(config)


async def test_the_paused_request_is_both_formats_and_a_bad_answer_keeps_it(
    scripted, fake_tools, tmp_path
):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await averify(CLAIM, "mad", model=name, review=True, thread="t1", checkpoint=db)
    request = pending_review(await _state(db, "t1", None, name))
    assert request is not None
    check_request(request)
    action = request["action_requests"][0]
    assert action["name"] == "mad" and action["args"]["verdict"] == "SUPPORTS"
    for part in (CLAIM, "**Proposed verdict:** SUPPORTS", "**Cost:**", "**Why the run stopped:**"):
        assert part in action["description"], part
    for bad in ({"decisions": [{"type": "reject"}]}, [{"type": "ignore", "args": None}]):
        state = await _state(db, "t1", bad, name)
        again = pending_review(state)
        assert state.next == (REVIEW_NODE,) and again is not None and again["refused"]
        assert {k: v for k, v in again.items() if k != "refused"} == request
        assert state.values["review"]["status"] == "pending"  # no decision
    done = await _state(
        db, "t1", {"decisions": [{"type": "reject", "message": "REFUTES: x"}]}, name
    )
    assert not done.next and done.values["verdict"] == "REFUTES"
    assert done.values["review"] == {**done.values["review"], "status": "overruled", "note": "x"}
