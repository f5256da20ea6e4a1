"""MADAM-RAG baseline: answer the question from the model's own knowledge, no documents."""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.madam_rag.baselines import answer_no_rag
from factdebate.nodes.madam_rag.prepare import prepare_question_only
from factdebate.nodes.madam_rag.state import MadamOutput, MadamState, QuestionInput
from factdebate.nodes.review import add_review, free_answers

MadamContext = context_class("madam-no-rag")  # the settings class the catalog names

builder = StateGraph(
    MadamState, context_schema=MadamContext, input_schema=QuestionInput, output_schema=MadamOutput
)
builder.add_node("prepare", prepare_question_only)
builder.add_node("answer", answer_no_rag)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "answer")
builder.add_edge("answer", add_review(builder, free_answers))

graph = builder.compile(name="madam-no-rag")
