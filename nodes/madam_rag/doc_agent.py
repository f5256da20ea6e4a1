"""MADAM-RAG document agents: one per document, fanned out with ``Send``, capped per run."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send
from pydantic import BaseModel, Field

from factdebate.nodes.common import model_for, run_semaphore, settings
from factdebate.nodes.evidence_block import render_evidence, sanitize
from factdebate.nodes.madam_rag.aggregate import agent_turns
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.madam_rag.state import AgentTask, AgentTurn, MadamState
from factdebate.prompts import madam_rag as prompts
from factdebate.tools.models.llm import ask_structured


class AgentAnswer(BaseModel):
    """What a document agent must return."""

    answer: str = Field(description="The short answer (several separated by '; '), or 'unknown'.")
    explanation: str = Field(description="Why, pointing at the document.")


def agent_name(index: int) -> str:
    """Name of the agent that represents document ``index`` (0-based)."""
    return f"agent_{index + 1}"


def fan_out(state: MadamState, runtime: Runtime[MadamContext]) -> list[Send] | Literal["__end__"]:
    """Send one task per document for the current round, or end once a stop reason is set.

    From round 2 each task carries what ``round_input`` names: the other agents' previous
    answers, or the aggregator's previous answers and explanation.
    """
    if state.get("stop_reason") or not state.get("documents"):
        return "__end__"
    ctx = settings(runtime, MadamContext)
    later = state["round"] > 1
    before = agent_turns(state.get("transcript", []), state["round"] - 1) if later else {}
    tasks = []
    for i, doc in enumerate(state["documents"]):
        name = agent_name(i)
        task = AgentTask(
            run_key=state["run_key"],
            agent=name,
            document=doc,
            question=state["question"],
            round=state["round"],
            round_input=ctx.round_input,
            previous_answers=None,
            previous_explanation=None,
            other_responses=[],
        )
        if later and ctx.round_input == "aggregator":
            task["previous_answers"] = state.get("last_answers")
            task["previous_explanation"] = state.get("last_explanation")
        elif later:
            task["other_responses"] = [t for a, t in sorted(before.items()) if a != name]
        tasks.append(Send("doc_agent", task))
    return tasks


def render_others(turns: list[AgentTurn], max_chars: int) -> str:
    """The other agents' previous answers and explanations (model text: sanitised)."""
    if not turns:
        return "(no other agent gave a readable answer)"
    return "\n".join(
        prompts.OTHER_RESPONSE.format(
            agent=t["agent"],
            answer=sanitize(t.get("answer") or "(unreadable)", 300),
            explanation=sanitize(t.get("explanation", ""), max_chars),
        )
        for t in turns
    )


def agent_prompt(task: AgentTask, max_doc_chars: int) -> str:
    """Build the agent's prompt: its one document and, from round 2, the ``round_input``."""
    if task["round"] <= 1:
        previous = ""
    elif task["round_input"] == "agents":
        previous = prompts.AGENT_OTHERS.format(
            responses=render_others(task["other_responses"], max_doc_chars)
        )
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
    # Agents of a round all run in one LangGraph step, so the cap binds exactly them.
    async with run_semaphore(task["run_key"], ctx.max_concurrency):
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
