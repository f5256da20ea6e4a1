"""Self-consistency on questions: k answers from all documents in one prompt, vote on answers.

Each sample is MADAM-RAG's concatenated-RAG baseline step over the same documents (given,
else retrieved once); samples agree when their normalised answer sets are equal.
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.madam_rag.baselines import answer_concat
from factdebate.nodes.madam_rag.prepare import prepare
from factdebate.nodes.madam_rag.state import MadamOutput, QuestionInput
from factdebate.nodes.review import add_review, free_answers
from factdebate.nodes.self_consistency.sample import make_fan_out, make_sampler
from factdebate.nodes.self_consistency.state import SelfConsistencyState
from factdebate.nodes.self_consistency.vote import vote_answers

SelfConsistencyQaContext = context_class("self-consistency-qa")  # the catalog's class

builder = StateGraph(
    SelfConsistencyState,
    context_schema=SelfConsistencyQaContext,
    input_schema=QuestionInput,
    output_schema=MadamOutput,
)
FINAL = add_review(builder, free_answers)
builder.add_node("prepare", prepare)
builder.add_node("sample", make_sampler(answer_concat, SelfConsistencyQaContext))
builder.add_node("vote", vote_answers)
builder.add_edge(START, "prepare")
builder.add_conditional_edges(
    "prepare", make_fan_out(SelfConsistencyQaContext, FINAL), ["sample", FINAL]
)
builder.add_edge("sample", "vote")
builder.add_edge("vote", FINAL)

graph = builder.compile(name="self-consistency-qa")
