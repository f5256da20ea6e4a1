"""MAD-Fact jury: role-played jurors debate one claim over rounds; a majority decides.

Each turn a juror plans (direct answer, mandatory search, or a confidence estimate that
triggers a search below the threshold), optionally searches with a query nobody used before,
then speaks. After the last juror of a round the debate moves to the next round, stops early
(rule 3, on agreement after round 1), or goes to the majority judge.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.nodes.mad_fact.context import MADFactContext
from factdebate.nodes.mad_fact.jury import (
    advance,
    judge,
    open_claim,
    plan_turn,
    route_after_turn,
    route_turn,
    search,
    speak,
)
from factdebate.nodes.mad_fact.state import JuryInput, JuryOutput, JuryState

builder = StateGraph(
    JuryState, context_schema=MADFactContext, input_schema=JuryInput, output_schema=JuryOutput
)
builder.add_node("open_claim", open_claim)
builder.add_node("plan_turn", plan_turn)
builder.add_node("search", search)
builder.add_node("speak", speak)
builder.add_node("advance", advance)
builder.add_node("judge", judge)
builder.add_edge(START, "open_claim")
builder.add_edge("open_claim", "plan_turn")
builder.add_conditional_edges("plan_turn", route_turn, {"search": "search", "speak": "speak"})
builder.add_edge("search", "speak")
builder.add_edge("speak", "advance")
builder.add_conditional_edges(
    "advance", route_after_turn, {"plan_turn": "plan_turn", "judge": "judge"}
)
builder.add_edge("judge", END)

graph = builder.compile(name="mad-fact-jury")
