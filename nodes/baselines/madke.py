"""MADKE baseline: one static retrieval shared by both debaters, agreement or a judge."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.baselines.context import MADKEContext
from factdebate.nodes.baselines.state import MADKEState
from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import budget_stop, model_for, over_budget, route, settings, turn_of
from factdebate.nodes.evidence_block import quote_answer, render_evidence
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import baselines as prompts

AGENTS = ("debater_a", "debater_b")


async def retrieve_once(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
    """Validate the claim and retrieve the shared documents with the claim as query."""
    ctx = settings(runtime, MADKEContext)
    claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
    docs, errors = await retrieve_or_record(
        ctx, ctx.tool, claim, agent="retriever", round_no=0, claim=claim
    )
    return {"claim": claim, "evidence": docs, "round": 1, "rounds": 1, "errors": errors}


def make_debater(agent: str) -> Any:
    """Build the answer node of ``agent``."""

    async def debate(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
        ctx = settings(runtime, MADKEContext)
        round_no, docs = state["round"], state.get("evidence", [])
        shared = {
            "agent": agent.replace("_", " "),
            "claim": state["claim"],
            "evidence": render_evidence(docs, ctx.max_doc_chars),
            "evidence_rules": prompts.EVIDENCE_RULES,
            "label_instructions": prompts.LABEL_INSTRUCTIONS,
        }
        if round_no == 1:
            prompt = prompts.MADKE_FIRST.format(**shared)
        else:
            others = [
                turn_of(state.get("transcript", []), a, round_no - 1) for a in AGENTS if a != agent
            ]
            text = (
                "\n".join(
                    f"- {t.get('agent')}: {quote_answer(t.get('answer'), ctx.max_doc_chars)}"
                    for t in others
                    if t
                )
                or "(none)"
            )
            prompt = prompts.MADKE_NEXT.format(**shared, others=text)
        model = await model_for(ctx, "debater")
        reply = await ask_label(
            model,
            prompt,
            site=ctx.site(role="debater", agent=agent, stage="argue", round_no=round_no),
        )
        turn = Turn(
            round=round_no,
            agent=agent,
            tool=ctx.tool,
            query=state["claim"],
            evidence=docs,
            answer=reply.text,
            label=reply.label,
        )
        return {"transcript": [turn], "cost": reply.cost, "errors": reply.errors}

    debate.__name__ = agent
    return debate


async def check(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
    """Stop on agreement; else open the next round or hand over to the judge."""
    ctx = settings(runtime, MADKEContext)
    round_no = state["round"]
    turns = [t for a in AGENTS if (t := turn_of(state.get("transcript", []), a, round_no))]
    labels = {t.get("label") for t in turns}
    if len(turns) == len(AGENTS) and len(labels) == 1 and None not in labels:
        return {
            "decision": "consensus",
            "verdict": turns[0]["label"],
            "stop_reason": "consensus",
            "justification": without_label(turns[0].get("answer")),
            "decided_by": decided(
                "debaters",
                round_no,
                "consensus",
                f"All debaters concluded {turns[0]['label']} in round {round_no}; the "
                f"justification is {turns[0].get('agent')}'s reasoning.",
            ),
        }
    spent = over_budget(state.get("cost", {}), ctx)
    if spent:  # no budget for another round or the judge: stop, keep the transcript
        return {
            **budget_stop(spent, agent="check", round_no=round_no),
            "decision": "budget_exhausted",
        }
    if round_no >= ctx.max_rounds:
        return {"decision": "judge"}
    return {"decision": "next_round", "round": round_no + 1, "rounds": round_no + 1}


async def judge(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
    """Decide from the shared documents and the last answers."""
    ctx = settings(runtime, MADKEContext)
    round_no = state["round"]
    last = [t for a in AGENTS if (t := turn_of(state.get("transcript", []), a, round_no))]
    prompt = prompts.MADKE_JUDGE.format(
        evidence_rules=prompts.EVIDENCE_RULES,
        label_instructions=prompts.LABEL_INSTRUCTIONS,
        claim=state["claim"],
        answers="\n".join(
            f"- {t.get('agent')}: {quote_answer(t.get('answer'), ctx.max_doc_chars)}" for t in last
        ),
        evidence=render_evidence(state.get("evidence", []), ctx.max_doc_chars),
    )
    model = await model_for(ctx, "judge")
    reply = await ask_label(
        model, prompt, site=ctx.site(role="judge", agent="judge", stage="judge", round_no=round_no)
    )
    return {
        "verdict": reply.label,
        "justification": without_label(reply.text),
        "decided_by": decided(
            "judge",
            round_no,
            "round_limit",
            f"The debaters still disagreed after {round_no} round(s), the round limit.",
        ),
        "stop_reason": "round_limit",
        "cost": reply.cost,
        "errors": reply.errors,
    }


def route_after_check(state: MADKEState) -> Literal["next_round", "judge", "__end__"]:
    """Conditional edge after the agreement check."""
    return route(
        state,
        {
            "consensus": "__end__",
            "budget_exhausted": "__end__",
            "judge": "judge",
            "next_round": "next_round",
        },
    )


async def next_round(state: MADKEState) -> dict[str, Any]:
    """Fan-out point of a new round (the round counter was already advanced)."""
    return {}
