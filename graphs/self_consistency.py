"""Self-consistency over evidence: fix the evidence once, k RAG-CoT samples on it, majority vote.

Each sample is RAG-CoT's own answer step over the same evidence set (given, else retrieved
once, as DebateCV's debaters get it); the vote and its tie rule are in
``nodes/self_consistency/vote.py``.
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.debate_cv.debate_turn import make_prepare_node
from factdebate.nodes.debate_cv.rag_cot import answer as rag_cot_answer
from factdebate.nodes.debate_cv.state import EvidenceClaimInput, EvidenceOutput
from factdebate.nodes.review import add_review, averitec_labels
from factdebate.nodes.self_consistency.sample import make_fan_out, make_sampler
from factdebate.nodes.self_consistency.state import SelfConsistencyState
from factdebate.nodes.self_consistency.vote import vote_labels

SelfConsistencyContext = context_class("self-consistency")  # the settings class the catalog names

builder = StateGraph(
    SelfConsistencyState,
    context_schema=SelfConsistencyContext,
    input_schema=EvidenceClaimInput,
    output_schema=EvidenceOutput,
)
FINAL = add_review(builder, averitec_labels)
builder.add_node("prepare", make_prepare_node(SelfConsistencyContext))
builder.add_node("sample", make_sampler(rag_cot_answer, SelfConsistencyContext))
builder.add_node("vote", vote_labels)
builder.add_edge(START, "prepare")
builder.add_conditional_edges(
    "prepare", make_fan_out(SelfConsistencyContext, FINAL), ["sample", FINAL]
)
builder.add_edge("sample", "vote")
builder.add_edge("vote", FINAL)

graph = builder.compile(name="self-consistency")
