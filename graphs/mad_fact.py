"""MAD-Fact: a clerk splits a long answer into claims, a jury subgraph checks each, then scores.

Claims go to the jury subgraph with ``Send`` in waves of at most ``claim_concurrency``;
the score node computes precision and, with reference answers (supplied or written by
``expert_models``), the pyramid-weighted precision, recall@gamma and F1@gamma.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.jury import graph as jury_graph
from nodes.mad_fact.clerk import clerk, write_references
from nodes.mad_fact.context import MADFactContext
from nodes.mad_fact.dispatch import dispatch, route_claims
from nodes.mad_fact.score_answer import score_answer
from nodes.mad_fact.state import AnswerInput, MADFactOutput, MADFactState

builder = StateGraph(
    MADFactState,
    context_schema=MADFactContext,
    input_schema=AnswerInput,
    output_schema=MADFactOutput,
)
builder.add_node("write_references", write_references)
builder.add_node("clerk", clerk)
builder.add_node("dispatch", dispatch)
builder.add_node("jury", jury_graph)
builder.add_node("score", score_answer)
builder.add_edge(START, "write_references")
builder.add_edge("write_references", "clerk")
builder.add_edge("clerk", "dispatch")
builder.add_conditional_edges("dispatch", route_claims, {"jury": "jury", "score": "score"})
builder.add_edge("jury", "dispatch")
builder.add_edge("score", END)

graph = builder.compile(name="mad-fact")
