"""Zero-shot chain-of-thought baseline: one model call, no evidence, one label."""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.baselines.cot import answer
from factdebate.nodes.baselines.state import CoTState
from factdebate.nodes.review import add_review, fever_labels
from factdebate.nodes.state import ClaimInput, DebateOutput

Context = context_class("cot")  # the settings class the catalog names

builder = StateGraph(
    CoTState, context_schema=Context, input_schema=ClaimInput, output_schema=DebateOutput
)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", add_review(builder, fever_labels))

graph = builder.compile(name="cot")
