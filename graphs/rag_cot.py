"""RAG-CoT baseline: one model reads the evidence set, reasons step by step, ends with a label."""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from factdebate.graphs.registry import context_class
from factdebate.nodes.debate_cv.debate_turn import make_prepare_node
from factdebate.nodes.debate_cv.rag_cot import answer
from factdebate.nodes.debate_cv.state import EvidenceClaimInput, EvidenceOutput, RAGCoTState
from factdebate.nodes.review import add_review, averitec_labels

RAGCoTContext = context_class("rag-cot")  # the settings class the catalog names

builder = StateGraph(
    RAGCoTState,
    context_schema=RAGCoTContext,
    input_schema=EvidenceClaimInput,
    output_schema=EvidenceOutput,
)
builder.add_node("prepare", make_prepare_node(RAGCoTContext))
builder.add_node("answer", answer)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "answer")
builder.add_edge("answer", add_review(builder, averitec_labels))

graph = builder.compile(name="rag-cot")
