"""Single-agent ReAct baseline: one agent alternates search and reasoning, then answers.

A small explicit loop rather than tool calling, so any chat model (including the embedded
one and scripted test models) can drive it: the agent writes `SEARCH: [query]` to retrieve
with its tool, or an answer ending with a label. After ``max_steps`` searches it must answer.
With ``query_formulation`` off the claim itself is searched once and the agent answers.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.baselines.react import act, route_after_start, route_after_think, start, think
from factdebate.nodes.baselines.state import ReactOutput, ReactState
from factdebate.nodes.review import add_review, fever_labels
from factdebate.nodes.state import ClaimInput

ReactContext = context_class("react")  # the settings class the catalog names

builder = StateGraph(
    ReactState, context_schema=ReactContext, input_schema=ClaimInput, output_schema=ReactOutput
)
builder.add_node("start", start)
builder.add_node("think", think)
builder.add_node("act", act)
builder.add_edge(START, "start")
builder.add_conditional_edges("start", route_after_start, {"act": "act", "think": "think"})
builder.add_conditional_edges(
    "think",
    route_after_think,
    {"act": "act", "think": "think", END: add_review(builder, fever_labels)},
)
builder.add_edge("act", "think")

graph = builder.compile(name="react")
