"""RAG-CoT baseline: one model reads the evidence set, reasons step by step, ends with a label."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.context import RAGCoTContext
from graphs.debate_cv_state import EvidenceClaimInput, EvidenceOutput, RAGCoTState
from graphs.state import ErrorRecord, RoleCost, Turn
from nodes.common import model_for, settings
from nodes.debate_turn import make_prepare_node
from nodes.evidence_block import render_evidence
from nodes.parse import ParseFailure, parse_label
from prompts import debate_cv as prompts
from prompts.common import LABEL_INSTRUCTIONS, LABELS_3
from tools.evidence import Evidence
from tools.llm import ask


def label_set(ctx: RAGCoTContext) -> tuple[tuple[str, ...], str]:
    """Return the allowed labels and their instructions under the ``labels`` setting."""
    if ctx.labels == 3:
        return LABELS_3, LABEL_INSTRUCTIONS
    return prompts.LABELS_4, prompts.LABEL_INSTRUCTIONS_4


async def cot_turn(
    model: BaseChatModel, claim: str, docs: list[Evidence], ctx: RAGCoTContext, agent: str
) -> tuple[Turn, dict[str, RoleCost], list[ErrorRecord]]:
    """One RAG-CoT answer as a transcript turn; an unreadable label is an error, not a guess."""
    labels, instructions = label_set(ctx)
    prompt = prompts.RAG_COT.format(evidence_rules=prompts.EVIDENCE_RULES,
                                    label_instructions=instructions, claim=claim,
                                    evidence=render_evidence(docs, ctx.max_doc_chars))
    reply = await ask(model, prompt, role="debater", agent=agent, stage="answer", round_no=1,
                      timeout=ctx.call_timeout_s, retries=ctx.model_retries)
    errors = list(reply.errors)
    label: str | None = None
    if reply.text is not None:
        parsed = parse_label(reply.text, labels)
        if isinstance(parsed, ParseFailure):
            errors.append(ErrorRecord(round=1, agent=agent, stage="answer", kind="parse_error",
                                      message=parsed.reason, raw=parsed.raw[:2000]))
        else:
            label = parsed
    turn = Turn(round=1, agent=agent, tool=docs[0]["source"] if docs else "none", evidence=docs,
                answer=reply.text or "", label=label)
    return turn, reply.cost, errors


async def answer(state: RAGCoTState, runtime: Runtime[RAGCoTContext]) -> dict[str, Any]:
    """Ask the single model for its reasoning and label."""
    ctx = settings(runtime, RAGCoTContext)
    model = await model_for(ctx, "debater")
    turn, cost, errors = await cot_turn(model, state["claim"], state.get("evidence", []), ctx,
                                        "rag_cot")
    return {"verdict": turn["label"], "justification": turn["answer"],
            "stop_reason": "single_answer", "rounds": 1, "transcript": [turn], "cost": cost,
            "errors": errors}


builder = StateGraph(RAGCoTState, context_schema=RAGCoTContext, input_schema=EvidenceClaimInput,
                     output_schema=EvidenceOutput)
builder.add_node("prepare", make_prepare_node(RAGCoTContext))
builder.add_node("answer", answer)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "answer")
builder.add_edge("answer", END)

graph = builder.compile(name="rag-cot")
