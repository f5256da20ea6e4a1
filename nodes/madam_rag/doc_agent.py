"""MADAM-RAG document agents: one per document, fanned out with ``Send``, capped per run."""

from __future__ import annotations

import asyncio
from typing import Any, Literal
from weakref import WeakValueDictionary

from langgraph.runtime import Runtime
from langgraph.types import Send
from pydantic import BaseModel, Field

from nodes.common import model_for, settings
from nodes.evidence_block import render_evidence, sanitize
from nodes.madam_rag.context import MadamContext
from nodes.madam_rag.state import AgentTask, AgentTurn, MadamState
from prompts import madam_rag as prompts
from tools.llm import ask_structured

# One semaphore per run, alive while any agent of that run holds it. Agents of a round all
# run in the same LangGraph step, so the cap ``max_concurrency`` binds exactly them; runs
# batched side by side (``abatch``) each get their own cap.
_SEMAPHORES: WeakValueDictionary[str, asyncio.Semaphore] = WeakValueDictionary()


class AgentAnswer(BaseModel):
    """What a document agent must return."""

    answer: str = Field(description="One short answer, or 'unknown'.")
    explanation: str = Field(description="Why, pointing at the document.")


def agent_name(index: int) -> str:
    """Name of the agent that represents document ``index`` (0-based)."""
    return f"agent_{index + 1}"


def semaphore_for(run_key: str, limit: int) -> asyncio.Semaphore:
    """Return the run's concurrency limiter, creating it on first use."""
    sem = _SEMAPHORES.get(run_key)
    if sem is None:
        sem = asyncio.Semaphore(limit)
        _SEMAPHORES[run_key] = sem
    return sem


def fan_out(state: MadamState) -> list[Send] | Literal["__end__"]:
    """Send one task per document for the current round, or end once a stop reason is set."""
    if state.get("stop_reason") or not state.get("documents"):
        return "__end__"
    return [
        Send(
            "doc_agent",
            AgentTask(
                run_key=state["run_key"],
                agent=agent_name(i),
                document=doc,
                question=state["question"],
                round=state["round"],
                previous_answers=state.get("last_answers") if state["round"] > 1 else None,
                previous_explanation=state.get("last_explanation") if state["round"] > 1 else None,
            ),
        )
        for i, doc in enumerate(state["documents"])
    ]


def agent_prompt(task: AgentTask, max_doc_chars: int) -> str:
    """Build the agent's prompt: its one document, and from round 2 the aggregator's last word."""
    if task["round"] <= 1:
        previous = ""
    elif task["previous_answers"] is None:
        previous = prompts.AGENT_PREVIOUS_UNREADABLE
    else:
        previous = prompts.AGENT_PREVIOUS.format(
            answers=sanitize("; ".join(task["previous_answers"]), max_doc_chars) or "(none)",
            explanation=sanitize(task["previous_explanation"] or "", max_doc_chars),
        )
    return prompts.AGENT.format(
        answer_style=prompts.ANSWER_STYLE,
        doc_rules=prompts.DOC_RULES,
        question=task["question"],
        document=render_evidence([task["document"]], max_doc_chars),
        previous=previous,
    )


async def doc_agent(task: AgentTask, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Answer the question from one document; an unreadable reply is recorded, not guessed."""
    ctx = settings(runtime, MadamContext)
    model = await model_for(ctx, "debater")
    prompt = agent_prompt(task, ctx.max_doc_chars)
    async with semaphore_for(task["run_key"], ctx.max_concurrency):
        parsed, reply = await ask_structured(
            model,
            prompt,
            AgentAnswer,
            site=ctx.site(
                role="agent", agent=task["agent"], stage="answer", round_no=task["round"]
            ),
        )
    doc = task["document"]
    turn = AgentTurn(
        round=task["round"],
        agent=task["agent"],
        tool=doc.get("source", ""),
        evidence=[doc],
        document_id=doc["id"],
        label=None,
    )
    if parsed is not None:
        turn["answer"] = " ".join(parsed.answer.split())
        turn["explanation"] = parsed.explanation.strip()
    return {"transcript": [turn], "cost": reply.cost, "errors": reply.errors}
