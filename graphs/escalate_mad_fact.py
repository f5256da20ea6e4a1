"""Escalating MAD-Fact: the single verifier screens each atomic claim; the jury only where unsure.

Each claim's pooled run is a small graph: screen_claim (the single-verifier baseline's
searches and its rating, ``screen_k`` times) -> screen: ratings that agree (``screen_share``)
settle the claim; the others go to MAD-Fact's own jury. The answer is scored by MAD-Fact's
own step, with the same importance-weighted formula.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.jury import graph as jury_graph
from factdebate.graphs.mad_fact import make_builder
from factdebate.graphs.registry import context_class
from factdebate.graphs.single_verifier import graph as verifier_graph
from factdebate.nodes.escalation.screen import make_screen_check, make_screen_router
from factdebate.nodes.mad_fact.screen import (
    ScreenedClaimState,
    make_claim_screen,
    screen_ratings,
    settled_claim,
)
from factdebate.nodes.mad_fact.state import JuryInput, JuryOutput

EscalateMADFactContext = context_class("escalate-mad-fact")  # the settings class the catalog names


claim_builder: StateGraph[Any, Any, Any, Any] = StateGraph(
    ScreenedClaimState,
    context_schema=EscalateMADFactContext,
    input_schema=JuryInput,
    output_schema=JuryOutput,
)
claim_builder.add_node("screen_claim", make_claim_screen(EscalateMADFactContext, verifier_graph))
claim_builder.add_node(
    "screen", make_screen_check(EscalateMADFactContext, screen_ratings, settled_claim)
)
claim_builder.add_node("jury", jury_graph)
claim_builder.add_edge(START, "screen_claim")
claim_builder.add_edge("screen_claim", "screen")
claim_builder.add_conditional_edges("screen", make_screen_router("jury", END), ["jury", END])
claim_builder.add_edge("jury", END)
screened_jury = claim_builder.compile(name="escalate-mad-fact-claim")

builder = make_builder(EscalateMADFactContext, jury=screened_jury)
graph = builder.compile(name="escalate-mad-fact")
