"""MAD-Fact: a clerk splits a long answer into claims, a jury subgraph checks each, then scores.

Claims go to the jury subgraph with ``Send`` in waves of at most ``claim_concurrency``;
the score node computes precision and, with reference answers (supplied or written by
``expert_models``), the pyramid-weighted precision, recall@gamma and F1@gamma.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from graphs.jury import graph as jury_graph
from graphs.mad_fact_state import AnswerInput, MADFactContext, MADFactOutput, MADFactState
from nodes.clerk import clerk, write_references
from nodes.common import settings
from nodes.score_answer import score_answer


async def dispatch(state: MADFactState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Pick the next wave: at most ``claim_concurrency`` claims not yet sent to a jury."""
    ctx = settings(runtime, MADFactContext)
    start = state.get("next_claim", 0)
    end = min(len(state.get("claim_texts", [])), start + ctx.claim_concurrency)
    return {"next_claim": end, "wave": list(range(start, end))}


def route_claims(state: MADFactState) -> list[Send] | Literal["score"]:
    """Send the current wave of claims to juries, or score once every claim is decided."""
    claims, wave = state.get("claim_texts", []), state.get("wave", [])
    if not wave:
        return "score"
    question = state.get("question", "")
    return [Send("jury", {"claim": claims[i], "claim_id": i, "question": question})
            for i in wave]


builder = StateGraph(
    MADFactState, context_schema=MADFactContext, input_schema=AnswerInput,
    output_schema=MADFactOutput,
)
builder.add_node("write_references", write_references)
builder.add_node("clerk", clerk)
builder.add_node("dispatch", dispatch)
builder.add_node("jury", jury_graph)
builder.add_node("score", score_answer)
builder.add_edge(START, "write_references")
builder.add_edge("write_references", "clerk")
builder.add_edge("clerk", "dispatch")
builder.add_conditional_edges("dispatch", route_claims, {"jury": "jury", "score": "score"})
builder.add_edge("jury", "dispatch")
builder.add_edge("score", END)

graph = builder.compile(name="mad-fact")
