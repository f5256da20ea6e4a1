"""MADAM-RAG: one agent per document, an aggregator, and rounds until the answers settle.

``prepare`` checks the question and takes the caller's documents (or retrieves ``top_k``
from the index); ``fan_out`` sends one task per document to ``doc_agent`` (parallel, at most
``max_concurrency`` model calls at once per run); ``aggregate`` reads the agents' answers in
seeded random order and lists every correct answer, then either stops (every agent kept its
answer: ``answers_stable``; or ``max_rounds`` reached: ``round_limit``) or fans out again,
each agent now also seeing what ``round_input`` names: the other agents' previous answers
(default) or the aggregator's answers and explanation.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.madam_rag.aggregate import aggregate
from factdebate.nodes.madam_rag.doc_agent import doc_agent, fan_out
from factdebate.nodes.madam_rag.prepare import prepare
from factdebate.nodes.madam_rag.state import MadamOutput, MadamState, QuestionInput
from factdebate.nodes.review import add_review, free_answers

MadamContext = context_class("madam-rag")  # the settings class the catalog names

builder = StateGraph(
    MadamState, context_schema=MadamContext, input_schema=QuestionInput, output_schema=MadamOutput
)
FINAL = add_review(builder, free_answers)
builder.add_node("prepare", prepare)
# The node takes the ``AgentTask`` payload of ``Send``, not the graph state; langgraph's
# add_node overloads only type-check nodes whose input is the state schema.
builder.add_node("doc_agent", cast(Any, doc_agent))
builder.add_node("aggregate", aggregate)
builder.add_edge(START, "prepare")
builder.add_conditional_edges("prepare", fan_out, {"doc_agent": "doc_agent", END: FINAL})
builder.add_edge("doc_agent", "aggregate")
builder.add_conditional_edges("aggregate", fan_out, {"doc_agent": "doc_agent", END: FINAL})

graph = builder.compile(name="madam-rag")
