"""Self-consistency without evidence: k zero-shot chain-of-thought samples, majority vote."""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.baselines.cot import answer as cot_answer
from factdebate.nodes.review import add_review, fever_labels
from factdebate.nodes.self_consistency.sample import make_fan_out, make_sampler, prepare_claim
from factdebate.nodes.self_consistency.state import SelfConsistencyState
from factdebate.nodes.self_consistency.vote import vote_labels
from factdebate.nodes.state import ClaimInput, DebateOutput

SelfConsistencyCotContext = context_class("self-consistency-cot")  # the catalog's class

builder = StateGraph(
    SelfConsistencyState,
    context_schema=SelfConsistencyCotContext,
    input_schema=ClaimInput,
    output_schema=DebateOutput,
)
FINAL = add_review(builder, fever_labels)
builder.add_node("prepare", prepare_claim)
builder.add_node("sample", make_sampler(cot_answer, SelfConsistencyCotContext))
builder.add_node("vote", vote_labels)
builder.add_edge(START, "prepare")
builder.add_conditional_edges(
    "prepare", make_fan_out(SelfConsistencyCotContext, FINAL), ["sample", FINAL]
)
builder.add_edge("sample", "vote")
builder.add_edge("vote", FINAL)

graph = builder.compile(name="self-consistency-cot")
