"""Nodes of the MADAM-RAG baselines: no-RAG, concatenated-prompt RAG, self-reflection."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.common import model_for, settings
from factdebate.nodes.evidence_block import render_evidence, sanitize
from factdebate.nodes.madam_rag.aggregate import AnswerList, verdict_of
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.madam_rag.state import AgentTurn, MadamState, ReflectState
from factdebate.nodes.state import DecidedBy, Turn, decided
from factdebate.prompts import madam_rag as prompts
from factdebate.tools.models.llm import ask, ask_structured
from factdebate.tools.scoring.answers import clean_answers

SINGLE = "single_agent"
UNREADABLE = "The answer could not be read (see errors)."


async def _answer(
    state: MadamState,
    ctx: MadamContext,
    prompt: str,
    stage: str,
    round_no: int,
    tool: str,
) -> dict[str, Any]:
    """Ask for an answer list; return the contract keys for it (unreadable -> verdict None)."""
    model = await model_for(ctx, "debater")
    parsed, reply = await ask_structured(
        model,
        prompt,
        AnswerList,
        site=ctx.site(role="agent", agent=SINGLE, stage=stage, round_no=round_no),
    )
    answers = clean_answers(parsed.answers) if parsed is not None else None
    explanation = parsed.explanation.strip() if parsed is not None else UNREADABLE
    turn = AgentTurn(
        round=round_no,
        agent=SINGLE,
        tool=tool,
        evidence=state.get("documents", []),
        answer=verdict_of(answers) or "",
        answers=answers or [],
        explanation=explanation,
        label=None,
    )
    return {
        "answers": answers or [],
        "verdict": verdict_of(answers),
        "justification": explanation,
        "rounds": round_no,
        "last_answers": answers,
        "last_explanation": explanation,
        "transcript": [turn],
        "cost": reply.cost,
        "errors": reply.errors,
    }


def _documents_block(state: MadamState, ctx: MadamContext) -> str:
    return render_evidence(state.get("documents", []), ctx.max_doc_chars)


async def answer_no_rag(state: MadamState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Answer from the model's own knowledge, no documents."""
    ctx = settings(runtime, MadamContext)
    prompt = prompts.NO_RAG.format(answer_style=prompts.ANSWER_STYLE, question=state["question"])
    update = await _answer(state, ctx, prompt, "answer", 1, "none")
    why = "One answer from the model's own knowledge."
    return {**update, "stop_reason": "single_answer", "decided_by": single(why)}


def _concat_prompt(state: MadamState, ctx: MadamContext) -> str:
    """The question with every document in one prompt (concatenated RAG, reflection step 0)."""
    return prompts.CONCAT.format(
        answer_style=prompts.ANSWER_STYLE,
        doc_rules=prompts.DOC_RULES,
        question=state["question"],
        documents=_documents_block(state, ctx),
    )


async def answer_concat(state: MadamState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Answer from all documents in one prompt."""
    ctx = settings(runtime, MadamContext)
    prompt = _concat_prompt(state, ctx)
    update = await _answer(state, ctx, prompt, "answer", 1, "given")
    why = "One answer from all documents in one prompt."
    return {**update, "stop_reason": "single_answer", "decided_by": single(why)}


def _stop_if_done(update: dict[str, Any], round_no: int, ctx: MadamContext) -> dict[str, Any]:
    if round_no >= 1 + ctx.reflection_rounds:
        update["stop_reason"] = "round_limit"
        update["decided_by"] = decided(
            SINGLE,
            round_no,
            "round_limit",
            f"The answer after {ctx.reflection_rounds} review-and-refine round(s) stands.",
        )
    return update


def single(detail: str) -> DecidedBy:
    """Provenance of a one-shot baseline answer."""
    return decided(SINGLE, 1, "single_answer", detail)


async def initial_answer(state: ReflectState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Self-reflection step 0: answer from all documents (as the concatenated baseline)."""
    ctx = settings(runtime, MadamContext)
    prompt = _concat_prompt(state, ctx)
    return _stop_if_done(await _answer(state, ctx, prompt, "answer", 1, "given"), 1, ctx)


def _previous(state: ReflectState, max_chars: int) -> dict[str, str]:
    answers = state.get("last_answers")
    return {
        "answers": "(unreadable)"
        if answers is None
        else (sanitize("; ".join(answers), max_chars) or "(none)"),
        "explanation": sanitize(state.get("last_explanation", ""), max_chars),
    }


async def review(state: ReflectState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Self-reflection: criticise the current answer (free text)."""
    ctx = settings(runtime, MadamContext)
    round_no = state.get("rounds", 1) + 1
    prompt = prompts.REVIEW.format(
        doc_rules=prompts.DOC_RULES,
        question=state["question"],
        documents=_documents_block(state, ctx),
        **_previous(state, ctx.max_doc_chars),
    )
    model = await model_for(ctx, "debater")
    reply = await ask(
        model, prompt, site=ctx.site(role="agent", agent=SINGLE, stage="review", round_no=round_no)
    )
    text = reply.text or ""
    turn = Turn(round=round_no, agent="reviewer", tool="none", evidence=[], answer=text, label=None)
    return {"critique": text, "transcript": [turn], "cost": reply.cost, "errors": reply.errors}


async def refine(state: ReflectState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Self-reflection: rewrite the answer in the light of the review."""
    ctx = settings(runtime, MadamContext)
    round_no = state.get("rounds", 1) + 1
    prompt = prompts.REFINE.format(
        answer_style=prompts.ANSWER_STYLE,
        doc_rules=prompts.DOC_RULES,
        question=state["question"],
        documents=_documents_block(state, ctx),
        review=sanitize(state.get("critique") or "(the review failed)", ctx.max_doc_chars),
        **_previous(state, ctx.max_doc_chars),
    )
    return _stop_if_done(
        await _answer(state, ctx, prompt, "refine", round_no, "given"), round_no, ctx
    )


def continue_or_end(state: MadamState) -> Literal["next", "__end__"]:
    """Stop once a stop reason is set (no documents, or the last step), else go on."""
    return "__end__" if state.get("stop_reason") else "next"
