"""MADKE baseline: one static retrieval before the debate, shared by every debater.

The claim is the query; the documents are retrieved once. Each round both debaters answer
in parallel from the shared documents (and, after round 1, each other's previous answers);
the debate stops when they agree on a label, else the judge decides at the round limit.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.baselines.madke import (
    AGENTS,
    check,
    judge,
    make_debater,
    next_round,
    retrieve_once,
    route_after_check,
)
from factdebate.nodes.baselines.state import MADKEOutput, MADKEState
from factdebate.nodes.review import add_review, fever_labels
from factdebate.nodes.state import ClaimInput

MADKEContext = context_class("madke")  # the settings class the catalog names

builder = StateGraph(
    MADKEState, context_schema=MADKEContext, input_schema=ClaimInput, output_schema=MADKEOutput
)
FINAL = add_review(builder, fever_labels)
builder.add_node("retrieve_once", retrieve_once)
builder.add_node("next_round", next_round)
builder.add_node("check", check)
builder.add_node("judge", judge)
builder.add_edge(START, "retrieve_once")
for name in AGENTS:
    builder.add_node(name, make_debater(name))
    builder.add_edge("retrieve_once", name)
    builder.add_edge("next_round", name)
builder.add_edge(list(AGENTS), "check")
builder.add_conditional_edges(
    "check", route_after_check, {"next_round": "next_round", "judge": "judge", END: FINAL}
)
builder.add_edge("judge", FINAL)

graph = builder.compile(name="madke")
