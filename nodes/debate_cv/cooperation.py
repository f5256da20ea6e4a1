"""Cooperation baseline: a CAMEL-style user directs an assistant that answers by RAG-CoT."""

from __future__ import annotations

import re
from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.common import budget_stop, model_for, over_budget, route, settings
from factdebate.nodes.debate_cv.context import CooperationContext
from factdebate.nodes.debate_cv.rag_cot import label_set
from factdebate.nodes.debate_cv.state import CooperationState
from factdebate.nodes.evidence_block import render_evidence, sanitize
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import debate_cv as prompts
from factdebate.tools.core.records import add_costs
from factdebate.tools.models.llm import ask

_DONE_RE = re.compile(r"\bTASK\s+DONE\b", re.IGNORECASE)


def render_conversation(transcript: list[Turn], max_chars: int) -> str:
    """The user's instructions and the assistant's answers so far, oldest first."""
    if not transcript:
        return "(nothing yet)"
    return "\n\n".join(
        f"{str(t.get('agent')).capitalize()} (exchange {t.get('round')}): "
        f"{sanitize(str(t.get('answer') or '(no answer)'), max_chars)}"
        for t in transcript
    )


def setup(state: CooperationState, ctx: CooperationContext) -> str:
    """The part both agents see: the task, claim, documents and the conversation."""
    return prompts.COOP_SETUP.format(
        evidence_rules=prompts.EVIDENCE_RULES,
        claim=state["claim"],
        evidence=render_evidence(state.get("evidence", []), ctx.max_doc_chars),
        conversation=render_conversation(state.get("transcript", []), ctx.max_doc_chars),
    )


def last_assistant(transcript: list[Turn]) -> Turn | None:
    """The assistant's latest answer, if any."""
    return next((t for t in reversed(transcript) if t.get("agent") == "assistant"), None)


async def user(state: CooperationState, runtime: Runtime[CooperationContext]) -> dict[str, Any]:
    """The user gives the next instruction, or declares the task done after an answer."""
    ctx = settings(runtime, CooperationContext)
    round_no = state.get("round", 0) + 1
    model = await model_for(ctx, "debater")
    reply = await ask(
        model,
        prompts.COOP_USER.format(setup=setup(state, ctx)),
        site=ctx.site(role="debater", agent="user", stage="instruct", round_no=round_no),
    )
    text = reply.text or ""
    turn = Turn(round=round_no, agent="user", tool="none", evidence=[], answer=text, label=None)
    update: dict[str, Any] = {
        "round": round_no,
        "transcript": [turn],
        "cost": reply.cost,
        "errors": reply.errors,
    }
    answered = last_assistant(state.get("transcript", []))
    if answered is not None and _DONE_RE.search(text):
        update.update(
            decision="done",
            verdict=answered.get("label"),
            justification=without_label(answered.get("answer")),
            decided_by=decided(
                "assistant",
                round_no - 1,
                "task_done",
                f"The user agent declared the task done; the assistant's answer of turn "
                f"{round_no - 1} stands.",
            ),
            stop_reason="task_done",
            rounds=round_no - 1,
        )
    else:
        update["decision"] = "assist"
    return update


async def assistant(
    state: CooperationState, runtime: Runtime[CooperationContext]
) -> dict[str, Any]:
    """The assistant follows the instruction and gives a labelled verdict (RAG-CoT style)."""
    ctx = settings(runtime, CooperationContext)
    round_no = state["round"]
    labels, instructions = label_set(ctx)
    prompt = prompts.COOP_ASSISTANT.format(setup=setup(state, ctx), label_instructions=instructions)
    model = await model_for(ctx, "debater")
    reply = await ask_label(
        model,
        prompt,
        ctx.site(role="debater", agent="assistant", stage="answer", round_no=round_no),
        labels=labels,
    )
    docs = state.get("evidence", [])
    turn = Turn(
        round=round_no,
        agent="assistant",
        tool=docs[0]["source"] if docs else "none",
        evidence=docs,
        answer=reply.text,
        label=reply.label,
    )
    update: dict[str, Any] = {
        "transcript": [turn],
        "cost": reply.cost,
        "errors": reply.errors,
        "rounds": round_no,
        # the latest answer stands if the conversation ends here
        "verdict": reply.label,
        "justification": without_label(reply.text),
    }
    spent = over_budget(add_costs(state.get("cost", {}), reply.cost), ctx)
    if round_no >= ctx.max_turns:
        update.update(
            decision="end",
            stop_reason="turn_limit",
            decided_by=decided(
                "assistant",
                round_no,
                "turn_limit",
                f"The turn limit ({ctx.max_turns}) was reached; the assistant's last answer "
                "stands.",
            ),
        )
    elif spent:
        stop = budget_stop(spent, agent="assistant", round_no=round_no)
        update.update(stop, decision="end", errors=[*reply.errors, *stop["errors"]])
    else:
        update["decision"] = "continue"
    return update


def route_after_user(state: CooperationState) -> Literal["assistant", "__end__"]:
    """To the assistant, or the end once the user declared the task done."""
    return route(state, {"assist": "assistant", "done": "__end__"})


def route_after_assistant(state: CooperationState) -> Literal["user", "__end__"]:
    """Back to the user for the next instruction, or the end (limit or budget)."""
    return route(state, {"continue": "user", "end": "__end__"})
