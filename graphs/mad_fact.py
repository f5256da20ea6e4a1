"""MAD-Fact: a clerk splits a long answer into claims, a jury subgraph checks each, then scores.

Each claim goes to its own run of the jury subgraph with ``Send``; the runs share a rolling
pool of ``claim_concurrency`` slots, so a claim starts as soon as another finishes. The score
node computes precision and, with reference answers (supplied or written by
``expert_models``), the pyramid-weighted precision, recall@gamma and F1@gamma.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.graph import START, StateGraph

from factdebate.graphs.jury import graph as jury_graph
from factdebate.graphs.registry import context_class
from factdebate.nodes.mad_fact.clerk import clerk, write_references
from factdebate.nodes.mad_fact.dispatch import pooled, route_claims
from factdebate.nodes.mad_fact.score_answer import score_answer
from factdebate.nodes.mad_fact.state import AnswerInput, MADFactState, MADFactStream
from factdebate.nodes.review import add_review, answer_labels

MADFactContext = context_class("mad-fact")  # the settings class the catalog names


def make_builder(
    context_schema: type[Any], jury: Any = jury_graph
) -> StateGraph[Any, Any, Any, Any]:
    """Wire MAD-Fact; ``jury`` is the per-claim graph (an escalation screens before the jury)."""
    builder = StateGraph(
        MADFactState,
        context_schema=context_schema,
        input_schema=AnswerInput,
        output_schema=MADFactStream,
    )
    builder.add_node("write_references", write_references)
    builder.add_node("clerk", clerk)
    # The pool takes the ``ClaimTask`` payload of ``Send``, not the graph state.
    builder.add_node("jury", cast(Any, pooled(jury)))
    builder.add_node("score", score_answer)
    builder.add_edge(START, "write_references")
    builder.add_edge("write_references", "clerk")
    builder.add_conditional_edges("clerk", route_claims, {"jury": "jury", "score": "score"})
    builder.add_edge("jury", "score")
    builder.add_edge("score", add_review(builder, answer_labels))
    return builder


builder = make_builder(MADFactContext)
graph = builder.compile(name="mad-fact")
