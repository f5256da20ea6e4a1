"""Single-verifier baseline (SAFE-like): one agent searches a few times, then rates the claim.

No debate and no roles: the agent writes ``search_steps`` queries one after another (each
new; repeats are recorded and not run), reading earlier results before each, then gives a
TRUE/FALSE rating from everything it found.
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.mad_fact.single_verifier import rate, route_step, search, start
from factdebate.nodes.mad_fact.state import VerifierOutput, VerifierState
from factdebate.nodes.review import add_review, truth_labels
from factdebate.nodes.state import ClaimInput

SingleVerifierContext = context_class("single-verifier")  # the settings class the catalog names

builder = StateGraph(
    VerifierState,
    context_schema=SingleVerifierContext,
    input_schema=ClaimInput,
    output_schema=VerifierOutput,
)
builder.add_node("start", start)
builder.add_node("search", search)
builder.add_node("rate", rate)
builder.add_edge(START, "start")
builder.add_conditional_edges("start", route_step, {"search": "search", "rate": "rate"})
builder.add_conditional_edges("search", route_step, {"search": "search", "rate": "rate"})
builder.add_edge("rate", add_review(builder, truth_labels))

graph = builder.compile(name="single-verifier")
