"""MAD baseline (Liang et al.): affirmative vs negative without retrieval, a judge decides.

Each round the affirmative argues for the claim and the negative answers it ("tit for tat").
After each round the judge either gives a label (stop) or asks for another round; at the
round limit it must give a label.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.baselines.mad import judge, make_side_node, route_after_judge
from factdebate.nodes.baselines.state import MADState
from factdebate.nodes.review import add_review, fever_labels
from factdebate.nodes.state import ClaimInput, DebateOutput

MADContext = context_class("mad")  # the settings class the catalog names

builder = StateGraph(
    MADState, context_schema=MADContext, input_schema=ClaimInput, output_schema=DebateOutput
)
builder.add_node("affirmative", make_side_node("affirmative"))
builder.add_node("negative", make_side_node("negative"))
builder.add_node("judge", judge)
builder.add_edge(START, "affirmative")
builder.add_edge("affirmative", "negative")
builder.add_edge("negative", "judge")
builder.add_conditional_edges(
    "judge",
    route_after_judge,
    {"affirmative": "affirmative", END: add_review(builder, fever_labels)},
)

graph = builder.compile(name="mad")
