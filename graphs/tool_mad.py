"""Tool-MAD: two debaters with different retrieval tools, RAGAS stability scores, a judge.

Per round both debaters run, in parallel, query formulation -> retrieval -> argue -> score;
the consensus check then ends the debate (same label and, when the stability score is on,
every answer over the faithfulness/relevance thresholds), opens the next round, or hands the
debate to the judge once the round limit is reached.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.common import Node
from factdebate.nodes.escalation.screen import first_round_to, make_screen_router
from factdebate.nodes.review import add_review, fever_labels
from factdebate.nodes.state import ClaimInput
from factdebate.nodes.tool_mad.argue import make_argue_node
from factdebate.nodes.tool_mad.consensus import consensus_check, route_after_check
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.judge import judge
from factdebate.nodes.tool_mad.query import make_query_node
from factdebate.nodes.tool_mad.retrieve import make_retrieve_node
from factdebate.nodes.tool_mad.rounds import DEBATERS, start_round
from factdebate.nodes.tool_mad.score import make_score_node
from factdebate.nodes.tool_mad.state import ToolMADOutput, ToolMADState


def make_builder(
    context_schema: type[ToolMADContext],
    *,
    screen: Node | None = None,
    screen_wrap: Callable[[Node], Node] | None = None,
    state_schema: type[ToolMADState] = ToolMADState,
    output_schema: type[ToolMADOutput] = ToolMADOutput,
) -> StateGraph[ToolMADState, ToolMADContext, ClaimInput, ToolMADOutput]:
    """Wire the Tool-MAD graph; ``context_schema`` may be a subclass with other defaults.

    With ``screen`` (an escalation), round 1 goes from the debaters' answers to that node
    instead of scoring; it writes ``decision`` "stop" (the run ends) or "escalate" (the
    round's scoring and everything after it run as usual). ``screen_wrap`` wraps the
    screen's query and argue nodes (e.g. to run them under a screen model).
    """
    builder = StateGraph(
        state_schema,
        context_schema=context_schema,
        input_schema=ClaimInput,
        output_schema=output_schema,
    )
    wrap = screen_wrap or (lambda node: node)
    builder.add_node("start_round", start_round)
    for agent in DEBATERS:
        opponent = next(a for a in DEBATERS if a != agent)
        chain = {
            f"query_{agent}": wrap(make_query_node(agent, opponent)),
            f"retrieve_{agent}": make_retrieve_node(agent),
            f"argue_{agent}": wrap(make_argue_node(agent, opponent)),
            f"score_{agent}": make_score_node(agent),
        }
        for name, node in chain.items():
            builder.add_node(name, node)
        names = ["start_round", *chain]
        for source, target in zip(names, names[1:], strict=False):
            if screen is not None and target == f"score_{agent}":
                builder.add_conditional_edges(
                    source, first_round_to("screen", target), ["screen", target]
                )
            else:
                builder.add_edge(source, target)
    builder.add_node("consensus_check", consensus_check)
    builder.add_node("judge", judge)
    final = add_review(builder, fever_labels)
    builder.add_edge(START, "start_round")
    builder.add_edge([f"score_{agent}" for agent in DEBATERS], "consensus_check")
    builder.add_conditional_edges(
        "consensus_check",
        route_after_check,
        {"start_round": "start_round", "judge": "judge", END: final},
    )
    builder.add_edge("judge", final)
    if screen is not None:
        scores = [f"score_{agent}" for agent in DEBATERS]
        builder.add_node("screen", screen)
        builder.add_conditional_edges("screen", make_screen_router(scores, final), [*scores, final])
    return builder


builder = make_builder(context_class("tool-mad"))  # the settings class the catalog names
graph = builder.compile(name="tool-mad")
