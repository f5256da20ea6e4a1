"""DebateCV: an affirmative and a negative debater argue over one evidence set; a moderator decides.

prepare (clean the claim; use the given evidence, even an empty list, or retrieve it once)
-> affirmative -> negative -> moderator. Debaters and moderator each read the whole
dialogue so far. The moderator stops the debate with a verdict, asks for another round, or,
once ``max_rounds`` rounds are done, hands over to the final-verdict step, which decides
from the whole debate and the moderator's notes. Moderator output that stays invalid after
the bounded retry ends the run with ``stop_reason="moderator_unparseable"`` and no verdict.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.common import Node
from factdebate.nodes.debate_cv.debate_turn import make_debater_node, make_prepare_node
from factdebate.nodes.debate_cv.moderator import final_verdict, moderate, route_after_moderator
from factdebate.nodes.debate_cv.state import DebateCVOutput, DebateCVState, EvidenceClaimInput
from factdebate.nodes.escalation.screen import make_screen_router
from factdebate.nodes.review import REVIEW_NODE, add_review, averitec_labels

DebateCVContext = context_class("debate-cv")  # the settings class the catalog names


def make_builder(
    context_schema: type[Any],
    *,
    screen: tuple[Node, Node] | None = None,
    state_schema: type[DebateCVState] = DebateCVState,
    output_schema: type[DebateCVOutput] = DebateCVOutput,
) -> StateGraph[Any, Any, Any, Any]:
    """Wire DebateCV; with ``screen`` = (sampler, check), an escalation.

    The sampler reads the prepared evidence first; the check writes ``decision`` "stop"
    (the run ends) or "escalate" (the debate runs over the same evidence).
    """
    builder = StateGraph(
        state_schema,
        context_schema=context_schema,
        input_schema=EvidenceClaimInput,
        output_schema=output_schema,
    )
    final = add_review(builder, averitec_labels)
    builder.add_node("prepare", make_prepare_node(context_schema))
    builder.add_node("affirmative", make_debater_node("affirmative"))
    builder.add_node("negative", make_debater_node("negative"))
    builder.add_node("moderator", moderate)
    builder.add_node("final_verdict", final_verdict)
    builder.add_edge(START, "prepare")
    if screen is None:
        builder.add_edge("prepare", "affirmative")
    else:
        builder.add_node("screen_samples", screen[0])
        builder.add_node("screen", screen[1])
        builder.add_edge("prepare", "screen_samples")
        builder.add_edge("screen_samples", "screen")
        builder.add_conditional_edges(
            "screen", make_screen_router("affirmative", final), ["affirmative", final]
        )
    builder.add_edge("affirmative", "negative")
    builder.add_edge("negative", "moderator")
    builder.add_conditional_edges(
        "moderator",
        route_after_moderator,
        {"affirmative": "affirmative", "final_verdict": "final_verdict", END: final},
    )
    builder.add_edge("final_verdict", final)
    return builder


builder = make_builder(DebateCVContext)
FINAL = REVIEW_NODE
graph = builder.compile(name="debate-cv")
