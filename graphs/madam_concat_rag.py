"""MADAM-RAG baseline: all documents (given or retrieved) in one prompt, one answer list."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.madam_rag.baselines import answer_concat, continue_or_end
from factdebate.nodes.madam_rag.prepare import prepare
from factdebate.nodes.madam_rag.state import MadamOutput, MadamState, QuestionInput
from factdebate.nodes.review import add_review, free_answers

MadamContext = context_class("madam-concat-rag")  # the settings class the catalog names

builder = StateGraph(
    MadamState, context_schema=MadamContext, input_schema=QuestionInput, output_schema=MadamOutput
)
FINAL = add_review(builder, free_answers)
builder.add_node("prepare", prepare)
builder.add_node("answer", answer_concat)
builder.add_edge(START, "prepare")
builder.add_conditional_edges("prepare", continue_or_end, {"next": "answer", END: FINAL})
builder.add_edge("answer", FINAL)

graph = builder.compile(name="madam-concat-rag")
