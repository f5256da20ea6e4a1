"""Majority baseline: independent RAG-CoT voters in parallel, then a voting step.

``voting="model"`` (default, the paper's setup): a model reads every vote (reasoning and
label; an unreadable one is marked so) with a voting prompt and gives the verdict; its own
unreadable output leaves the verdict None (``stop_reason="vote_unparseable"``). The tally is
recorded either way: ``stop_reason`` is ``majority``, ``majority_tie`` (several labels share
the top count) or ``no_votes``. ``voting="count"``: the label with the most readable votes
wins, a tie gives NOT ENOUGH INFO, no readable vote gives None.
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.debate_cv.debate_turn import make_prepare_node
from factdebate.nodes.debate_cv.majority import count_votes, fan_out, vote
from factdebate.nodes.debate_cv.state import EvidenceClaimInput, EvidenceOutput, RAGCoTState
from factdebate.nodes.review import add_review, averitec_labels

MajorityContext = context_class("majority")  # the settings class the catalog names

builder = StateGraph(
    RAGCoTState,
    context_schema=MajorityContext,
    input_schema=EvidenceClaimInput,
    output_schema=EvidenceOutput,
)
builder.add_node("prepare", make_prepare_node(MajorityContext))
builder.add_node("vote", vote)
builder.add_node("count_votes", count_votes)
builder.add_edge(START, "prepare")
builder.add_conditional_edges("prepare", fan_out, ["vote"])
builder.add_edge("vote", "count_votes")
builder.add_edge("count_votes", add_review(builder, averitec_labels))

graph = builder.compile(name="majority")
