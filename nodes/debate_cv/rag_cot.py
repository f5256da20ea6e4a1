"""RAG-CoT baseline: one model reads the evidence, reasons step by step, gives a label."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from factdebate.nodes.common import model_for, settings
from factdebate.nodes.debate_cv.context import RAGCoTContext
from factdebate.nodes.debate_cv.state import RAGCoTState
from factdebate.nodes.evidence_block import render_evidence
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import debate_cv as prompts
from factdebate.prompts.common import LABEL_INSTRUCTIONS
from factdebate.prompts.labels import LABELS_3, LABELS_4
from factdebate.tools.core.records import ErrorRecord, Evidence, RoleCost


def label_set(ctx: RAGCoTContext) -> tuple[tuple[str, ...], str]:
    """Return the allowed labels and their instructions under the ``labels`` setting."""
    if ctx.labels == 3:
        return LABELS_3, LABEL_INSTRUCTIONS
    return LABELS_4, prompts.LABEL_INSTRUCTIONS_4


def rag_cot_prompt(
    claim: str, docs: list[Evidence], label_instructions: str, max_doc_chars: int
) -> str:
    """RAG-CoT's prompt: the claim, the documents and how to give the label."""
    return prompts.RAG_COT.format(
        evidence_rules=prompts.EVIDENCE_RULES,
        label_instructions=label_instructions,
        claim=claim,
        evidence=render_evidence(docs, max_doc_chars),
    )


async def cot_turn(
    model: BaseChatModel, claim: str, docs: list[Evidence], ctx: RAGCoTContext, agent: str
) -> tuple[Turn, dict[str, RoleCost], list[ErrorRecord]]:
    """One RAG-CoT answer as a transcript turn; an unreadable label is an error, not a guess."""
    labels, instructions = label_set(ctx)
    prompt = rag_cot_prompt(claim, docs, instructions, ctx.max_doc_chars)
    site = ctx.site(role="debater", agent=agent, stage="answer", round_no=1)
    reply = await ask_label(model, prompt, site, labels=labels)
    turn = Turn(
        round=1,
        agent=agent,
        tool=docs[0]["source"] if docs else "none",
        evidence=docs,
        answer=reply.text,
        label=reply.label,
    )
    return turn, reply.cost, reply.errors


async def answer(state: RAGCoTState, runtime: Runtime[RAGCoTContext]) -> dict[str, Any]:
    """Ask the single model for its reasoning and label."""
    ctx = settings(runtime, RAGCoTContext)
    model = await model_for(ctx, "debater")
    turn, cost, errors = await cot_turn(
        model, state["claim"], state.get("evidence", []), ctx, "rag_cot"
    )
    return {
        "verdict": turn["label"],
        "justification": without_label(turn.get("answer")),
        "decided_by": decided("rag_cot", 1, "single_answer", "One answer from the evidence."),
        "stop_reason": "single_answer",
        "rounds": 1,
        "transcript": [turn],
        "cost": cost,
        "errors": errors,
    }
