"""MADAM-RAG aggregator: read the agents' answers in seeded random order, list the right ones."""

from __future__ import annotations

import random
from typing import Any, cast

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from factdebate.nodes.common import budget_error, model_for, over_budget, settings
from factdebate.nodes.evidence_block import sanitize
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.madam_rag.state import AgentTurn, MadamState
from factdebate.nodes.state import MODEL_FAILURE, Turn, decided
from factdebate.prompts import madam_rag as prompts
from factdebate.tools.core.records import ErrorRecord, add_costs
from factdebate.tools.models.llm import ask_structured
from factdebate.tools.scoring.answers import clean_answers, normalize_answer

AGGREGATOR = "aggregator"


class AnswerList(BaseModel):
    """A list of answers with the reasoning behind it (aggregator and baselines)."""

    answers: list[str] = Field(description="All correct short answers; empty when none.")
    explanation: str = Field(description="Why these answers, and why others were dropped.")


def agent_turns(transcript: list[Turn], round_no: int) -> dict[str, AgentTurn]:
    """Return the document agents' turns of ``round_no``, by agent name."""
    return {
        str(t["agent"]): cast(AgentTurn, t)
        for t in transcript
        if t.get("round") == round_no and "document_id" in t
    }


def answers_stable(transcript: list[Turn], round_no: int) -> bool:
    """Whether every agent gave, after normalisation, the same answer as the round before.

    An unreadable answer compares as empty, so an agent failing in both rounds does not keep
    the debate going on its own.
    """
    if round_no < 2:
        return False
    now, before = agent_turns(transcript, round_no), agent_turns(transcript, round_no - 1)
    if set(now) != set(before):
        return False
    return all(
        normalize_answer(now[a].get("answer", "")) == normalize_answer(before[a].get("answer", ""))
        for a in now
    )


def shuffled(turns: list[AgentTurn], seed: int, round_no: int) -> list[AgentTurn]:
    """Sort ``turns`` by agent number, then shuffle them with ``Random(seed + round_no)``."""
    ordered = sorted(turns, key=lambda t: int(str(t["agent"]).rsplit("_", 1)[-1]))
    random.Random(seed + round_no).shuffle(ordered)
    return ordered


def render_responses(turns: list[AgentTurn], max_chars: int) -> str:
    """Render the agents' answers as prompt lines (explanations are model text: sanitised)."""
    return "\n".join(
        prompts.AGENT_RESPONSE.format(
            agent=t["agent"],
            document_id=sanitize(t["document_id"], 200),
            answer=sanitize(t.get("answer", ""), 300),
            explanation=sanitize(t.get("explanation", ""), max_chars),
        )
        for t in turns
    )


def verdict_of(answers: list[str] | None) -> str | None:
    """Return ``verdict``: joined answers, ``unknown`` for none, None when unreadable."""
    if answers is None:
        return None
    return "; ".join(answers) if answers else "unknown"


def agents_failed(round_no: int) -> dict[str, Any]:
    """End the run without an answer: no agent of this round produced a readable one."""
    explanation = (
        f"No document agent produced a readable answer in round {round_no} (every model call "
        "failed or was unreadable; see errors), so no answer is given."
    )
    return {
        "rounds": round_no,
        "answers": [],
        "verdict": None,
        "justification": explanation,
        "last_answers": None,
        "last_explanation": explanation,
        "stop_reason": MODEL_FAILURE,
        "decided_by": decided(AGGREGATOR, round_no, MODEL_FAILURE, explanation),
        "errors": [
            ErrorRecord(
                round=round_no,
                agent=AGGREGATOR,
                stage="aggregate",
                kind="no_agent_answers",
                message=explanation,
            )
        ],
    }


async def aggregate(state: MadamState, runtime: Runtime[MadamContext]) -> dict[str, Any]:
    """Combine this round's agent answers, then stop (stable / round limit) or open a round."""
    ctx = settings(runtime, MadamContext)
    round_no = state["round"]
    transcript = state.get("transcript", [])
    readable = [t for t in agent_turns(transcript, round_no).values() if t.get("answer")]
    order = shuffled(readable, ctx.seed, round_no)
    update: dict[str, Any] = {"rounds": round_no}
    if not order:
        return agents_failed(round_no)
    prompt = prompts.AGGREGATOR.format(
        answer_style=prompts.ANSWER_STYLE,
        question=state["question"],
        responses=render_responses(order, ctx.max_doc_chars),
    )
    model = await model_for(ctx, "judge")
    parsed, reply = await ask_structured(
        model,
        prompt,
        AnswerList,
        site=ctx.site(role=AGGREGATOR, agent=AGGREGATOR, stage="aggregate", round_no=round_no),
    )
    update.update(cost=reply.cost, errors=reply.errors)
    answers: list[str] | None
    if parsed is None:
        answers, explanation = None, "The aggregator's answer could not be read (see errors)."
    else:
        answers, explanation = clean_answers(parsed.answers), parsed.explanation.strip()
    turn = AgentTurn(
        round=round_no,
        agent=AGGREGATOR,
        tool="none",
        evidence=[],
        answer=verdict_of(answers) or "",
        answers=answers or [],
        explanation=explanation,
        label=None,
        order=[str(t["agent"]) for t in order],
    )
    update.update(
        transcript=[turn],
        answers=answers or [],
        verdict=verdict_of(answers),
        justification=explanation,
        last_answers=answers,
        last_explanation=explanation,
    )
    spent = over_budget(add_costs(state.get("cost", {}), update.get("cost", {})), ctx)
    if answers_stable(transcript, round_no):
        update["stop_reason"] = "answers_stable"
        detail = f"Every document agent kept its round-{round_no - 1} answer in round {round_no}."
    elif round_no >= ctx.max_rounds:
        update["stop_reason"] = "round_limit"
        detail = f"The round limit ({ctx.max_rounds}) was reached."
    elif spent:
        # Out of budget before the next round: keep this round's answers, say why it stopped.
        update["stop_reason"] = "budget_exhausted"
        update["errors"] = [
            *update.get("errors", []),
            budget_error(spent, agent=AGGREGATOR, round_no=round_no),
        ]
        detail = f"Budget spent before another round: {spent}."
    else:
        update["round"] = round_no + 1
        return update
    readable_note = f" The aggregator read {len(order)} readable agent answer(s)."
    update["decided_by"] = decided(
        AGGREGATOR, round_no, update["stop_reason"], detail + readable_note
    )
    return update
