"""Single-agent ReAct baseline: search with the agent's tool or answer, step by step."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.baselines.context import ReactContext
from factdebate.nodes.baselines.state import ReactState
from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import model_for, route, settings
from factdebate.nodes.evidence_block import QUERY_CHARS, render_evidence, sanitize
from factdebate.nodes.labelled import without_label
from factdebate.nodes.parse import ParseFailure, parse_label, parse_query, wants_search
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import baselines as prompts
from factdebate.tools.core.records import ErrorRecord
from factdebate.tools.models.llm import ask


async def start(state: ReactState, runtime: Runtime[ReactContext]) -> dict[str, Any]:
    """Validate the claim; without query formulation, queue the claim as the only query."""
    ctx = settings(runtime, ReactContext)
    claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
    if ctx.query_formulation or ctx.tool == "none":
        return {"claim": claim, "searches": 0, "rounds": 0, "decision": "think"}
    return {
        "claim": claim,
        "searches": 0,
        "rounds": 0,
        "decision": "search",
        "pending_query": claim,
    }


def render_history(transcript: list[Turn], max_doc_chars: int) -> str:
    """Render the searches so far with their documents."""
    searches = [t for t in transcript if t.get("query")]
    if not searches:
        return "(none yet)"
    return "\n\n".join(
        f"Search {i}: [{sanitize(t.get('query') or '', QUERY_CHARS)}]\n"
        f"{render_evidence(t.get('evidence', []), max_doc_chars)}"
        for i, t in enumerate(searches, 1)
    )


async def think(state: ReactState, runtime: Runtime[ReactContext]) -> dict[str, Any]:
    """One agent step: request a search or give the final answer."""
    ctx = settings(runtime, ReactContext)
    used = state.get("searches", 0)
    budget = ctx.max_steps if ctx.query_formulation and ctx.tool != "none" else 0
    left = max(0, budget - used)
    prompt = prompts.REACT_STEP.format(
        tool_description=prompts.TOOL_DESCRIPTIONS[ctx.tool],
        searches_left=left,
        must_answer=prompts.MUST_ANSWER if left == 0 else "",
        evidence_rules=prompts.EVIDENCE_RULES,
        label_instructions=prompts.LABEL_INSTRUCTIONS,
        claim=state["claim"],
        history=render_history(state.get("transcript", []), ctx.max_doc_chars),
    )
    step = used + 1
    model = await model_for(ctx, "debater")
    reply = await ask(
        model, prompt, site=ctx.site(role="debater", agent="react", stage="think", round_no=step)
    )
    errors: list[ErrorRecord] = list(reply.errors)
    update: dict[str, Any] = {"cost": reply.cost, "errors": errors}
    text = reply.text or ""
    if reply.text is not None and left > 0 and wants_search(text):
        query = parse_query(text)
        if isinstance(query, str):
            return {**update, "decision": "search", "pending_query": query}
        site = ctx.site(role="debater", agent="react", stage="think", round_no=step)
        errors.append(
            site.error("parse_error", f"{query.reason}; the agent must answer now", query.raw)
        )
        return {**update, "decision": "think", "searches": budget}
    verdict: str | None = None
    if reply.text is not None:
        label = parse_label(text)
        if isinstance(label, ParseFailure):
            site = ctx.site(role="debater", agent="react", stage="answer", round_no=step)
            errors.append(site.error("parse_error", label.reason, label.raw))
        else:
            verdict = label
    turn = Turn(round=step, agent="react", tool=ctx.tool, evidence=[], answer=text, label=verdict)
    return {
        **update,
        "decision": "answer",
        "verdict": verdict,
        "justification": without_label(text),
        "decided_by": decided("react", step, "answered", f"The agent answered at step {step}."),
        "stop_reason": "answered",
        "rounds": step,
        "transcript": [turn],
    }


async def act(state: ReactState, runtime: Runtime[ReactContext]) -> dict[str, Any]:
    """Run the pending query through the agent's tool."""
    ctx = settings(runtime, ReactContext)
    step, query = state.get("searches", 0) + 1, state.get("pending_query", "")
    docs, errors = await retrieve_or_record(
        ctx, ctx.tool, query, agent="react", round_no=step, claim=state.get("claim", "")
    )
    turn = Turn(round=step, agent="react", tool=ctx.tool, query=query, evidence=docs)
    return {"searches": step, "transcript": [turn], "errors": errors}


def route_after_start(state: ReactState) -> Literal["act", "think"]:
    """Search with the claim first (no query formulation) or let the agent think."""
    return route(state, {"search": "act", "think": "think"})


def route_after_think(state: ReactState) -> Literal["act", "think", "__end__"]:
    """Run the requested search, ask again after an unreadable search, or finish."""
    return route(state, {"search": "act", "think": "think", "answer": "__end__"})
