"""DebateCV: an affirmative and a negative debater argue over one evidence set; a moderator decides.

prepare (clean the claim; use the given evidence, even an empty list, or retrieve it once)
-> affirmative -> negative -> moderator. Debaters and moderator each read the whole
dialogue so far. The moderator stops the debate with a verdict, asks for another round, or,
once ``max_rounds`` rounds are done, hands over to the final-verdict step, which decides
from the whole debate and the moderator's notes. Moderator output that stays invalid after
the bounded retry ends the run with ``stop_reason="moderator_unparseable"`` and no verdict.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.debate_cv.debate_turn import make_debater_node, make_prepare_node
from factdebate.nodes.debate_cv.moderator import final_verdict, moderate, route_after_moderator
from factdebate.nodes.debate_cv.state import DebateCVOutput, DebateCVState, EvidenceClaimInput
from factdebate.nodes.review import add_review, averitec_labels

DebateCVContext = context_class("debate-cv")  # the settings class the catalog names

builder = StateGraph(
    DebateCVState,
    context_schema=DebateCVContext,
    input_schema=EvidenceClaimInput,
    output_schema=DebateCVOutput,
)
FINAL = add_review(builder, averitec_labels)
builder.add_node("prepare", make_prepare_node(DebateCVContext))
builder.add_node("affirmative", make_debater_node("affirmative"))
builder.add_node("negative", make_debater_node("negative"))
builder.add_node("moderator", moderate)
builder.add_node("final_verdict", final_verdict)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "affirmative")
builder.add_edge("affirmative", "negative")
builder.add_edge("negative", "moderator")
builder.add_conditional_edges(
    "moderator",
    route_after_moderator,
    {"affirmative": "affirmative", "final_verdict": "final_verdict", END: FINAL},
)
builder.add_edge("final_verdict", FINAL)

graph = builder.compile(name="debate-cv")
