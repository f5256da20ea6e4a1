"""RAG-CoT baseline: one model reads the evidence set, reasons step by step, ends with a label."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from nodes.debate_cv.context import RAGCoTContext
from nodes.debate_cv.debate_turn import make_prepare_node
from nodes.debate_cv.rag_cot import answer
from nodes.debate_cv.state import EvidenceClaimInput, EvidenceOutput, RAGCoTState

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
builder.add_edge("answer", END)

graph = builder.compile(name="rag-cot")
