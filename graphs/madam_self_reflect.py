"""MADAM-RAG baseline: one agent answers from all documents, then reviews and refines it.

The review-and-refine step repeats ``reflection_rounds`` times (2 by default).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.madam_rag.baselines import continue_or_end, initial_answer, refine, review
from factdebate.nodes.madam_rag.prepare import prepare
from factdebate.nodes.madam_rag.state import MadamOutput, QuestionInput, ReflectState
from factdebate.nodes.review import add_review, free_answers

MadamContext = context_class("madam-self-reflect")  # the settings class the catalog names

builder = StateGraph(
    ReflectState,
    context_schema=MadamContext,
    input_schema=QuestionInput,
    output_schema=MadamOutput,
)
FINAL = add_review(builder, free_answers)
builder.add_node("prepare", prepare)
builder.add_node("initial_answer", initial_answer)
builder.add_node("review", review)
builder.add_node("refine", refine)
builder.add_edge(START, "prepare")
builder.add_conditional_edges("prepare", continue_or_end, {"next": "initial_answer", END: FINAL})
builder.add_conditional_edges("initial_answer", continue_or_end, {"next": "review", END: FINAL})
builder.add_edge("review", "refine")
builder.add_conditional_edges("refine", continue_or_end, {"next": "review", END: FINAL})

graph = builder.compile(name="madam-self-reflect")
