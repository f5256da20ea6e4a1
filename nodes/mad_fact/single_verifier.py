"""Single-verifier baseline (SAFE-like): a few new searches, then a TRUE/FALSE rating."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import model_for, settings
from factdebate.nodes.labelled import ask_parsed, without_label
from factdebate.nodes.mad_fact.context import SingleVerifierContext
from factdebate.nodes.mad_fact.jury import new_query, render_knowledge, render_used, used_queries
from factdebate.nodes.mad_fact.state import JuryTurn, KnowledgeEntry, VerifierState
from factdebate.nodes.parse import parse_truth
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import decided
from factdebate.prompts import mad_fact as prompts

AGENT = "verifier"


async def start(state: VerifierState, runtime: Runtime[SingleVerifierContext]) -> dict[str, Any]:
    """Validate the claim."""
    ctx = settings(runtime, SingleVerifierContext)
    return {
        "claim": clean_claim(state.get("claim"), ctx.max_claim_chars),
        "steps": 0,
        "knowledge": [],
        "rounds": 0,
        "budget": ctx.search_steps,
    }


async def search(state: VerifierState, runtime: Runtime[SingleVerifierContext]) -> dict[str, Any]:
    """Write one new query and run it; a failed step still counts against the budget."""
    ctx = settings(runtime, SingleVerifierContext)
    step, knowledge = state.get("steps", 0) + 1, list(state.get("knowledge", []))
    shown = render_knowledge(knowledge, ctx.max_doc_chars)

    def prompt_for(used: list[str]) -> str:
        return prompts.VERIFIER_QUERY.format(
            claim=state["claim"],
            knowledge=shown,
            evidence_rules=prompts.EVIDENCE_RULES,
            used_queries=render_used(used),
        )

    model = await model_for(ctx, "debater")
    query, cost, errors = await new_query(
        model,
        prompt_for,
        used_queries(knowledge),
        ctx.site(role="debater", agent=AGENT, stage="query", round_no=step),
        attempts=ctx.query_attempts,
    )
    if query is not None:
        docs, failed = await retrieve_or_record(
            ctx, "search", query, agent=AGENT, round_no=step, stage="search", claim=state["claim"]
        )
        errors.extend(failed)
        knowledge.append(KnowledgeEntry(query=query, agent=AGENT, round=step, evidence=docs))
    return {"steps": step, "knowledge": knowledge, "cost": cost, "errors": errors}


async def rate(state: VerifierState, runtime: Runtime[SingleVerifierContext]) -> dict[str, Any]:
    """Rate the claim TRUE or FALSE from the search results."""
    ctx = settings(runtime, SingleVerifierContext)
    knowledge = state.get("knowledge", [])
    prompt = prompts.VERIFIER_RATE.format(
        claim=state["claim"],
        knowledge=render_knowledge(knowledge, ctx.max_doc_chars),
        evidence_rules=prompts.EVIDENCE_RULES,
    )
    model = await model_for(ctx, "debater")
    site = ctx.site(role="debater", agent=AGENT, stage="rate", round_no=state.get("steps", 0))
    reply = await ask_parsed(model, prompt, parse_truth, site)
    errors, verdict = reply.errors, reply.value
    turns = [
        JuryTurn(
            round=e["round"], agent=AGENT, tool="search", query=e["query"], evidence=e["evidence"]
        )
        for e in knowledge
    ]
    turns.append(
        JuryTurn(round=state.get("steps", 0), agent=AGENT, answer=reply.text or "", label=verdict)
    )
    return {
        "verdict": verdict,
        "justification": without_label(reply.text),
        "decided_by": decided(
            AGENT,
            state.get("steps", 0),
            "answered",
            f"The verifier rated the claim after {len(knowledge)} search(es).",
        ),
        "stop_reason": "answered",
        "rounds": state.get("steps", 0),
        "transcript": turns,
        "cost": reply.cost,
        "errors": errors,
    }


def route_step(state: VerifierState) -> Literal["search", "rate"]:
    """Search until the step budget is used, then rate."""
    return "search" if state.get("steps", 0) < state.get("budget", 0) else "rate"
