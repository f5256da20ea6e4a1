"""Majority baseline: independent RAG-CoT voters in parallel, then a vote count.

Tie rule: votes without a readable label do not count; the label with the most votes wins;
when several labels share the top count the verdict is NOT ENOUGH INFO (the voters could not
settle the claim) with ``stop_reason="majority_tie"``; with no readable vote at all the
verdict is None (``stop_reason="no_votes"``).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from nodes.debate_cv.context import MajorityContext
from nodes.debate_cv.debate_turn import make_prepare_node
from nodes.debate_cv.majority import count_votes, fan_out, vote
from nodes.debate_cv.state import EvidenceClaimInput, EvidenceOutput, RAGCoTState

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
builder.add_edge("count_votes", END)

graph = builder.compile(name="majority")
