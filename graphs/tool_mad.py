"""Tool-MAD: two debaters with different retrieval tools, RAGAS stability scores, a judge.

Per round both debaters run, in parallel, query formulation -> retrieval -> argue -> score;
the consensus check then ends the debate (same label and, when the stability score is on,
every answer over the faithfulness/relevance thresholds), opens the next round, or hands the
debate to the judge once the round limit is reached.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
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
) -> StateGraph[ToolMADState, ToolMADContext, ClaimInput, ToolMADOutput]:
    """Wire the Tool-MAD graph; ``context_schema`` may be a subclass with other defaults."""
    builder = StateGraph(
        ToolMADState,
        context_schema=context_schema,
        input_schema=ClaimInput,
        output_schema=ToolMADOutput,
    )
    builder.add_node("start_round", start_round)
    for agent in DEBATERS:
        opponent = next(a for a in DEBATERS if a != agent)
        chain = {
            f"query_{agent}": make_query_node(agent, opponent),
            f"retrieve_{agent}": make_retrieve_node(agent),
            f"argue_{agent}": make_argue_node(agent, opponent),
            f"score_{agent}": make_score_node(agent),
        }
        for name, node in chain.items():
            builder.add_node(name, node)
        names = ["start_round", *chain]
        for source, target in zip(names, names[1:], strict=False):
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
    return builder


builder = make_builder(context_class("tool-mad"))  # the settings class the catalog names
graph = builder.compile(name="tool-mad")
