"""MADKE baseline: one static retrieval before the debate, shared by every debater.

The claim is the query; the documents are retrieved once. Each round both debaters answer
in parallel from the shared documents (and, after round 1, each other's previous answers);
the debate stops when they agree on a label, else the judge decides at the round limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.context import Context, ToolName
from graphs.state import ClaimInput, DebateOutput, ErrorRecord, Turn
from nodes.claims import clean_claim
from nodes.common import model_for, over_budget, settings, turn_of
from nodes.evidence_block import render_evidence
from nodes.labelled import ask_label
from prompts import baselines as prompts
from tools.evidence import Evidence
from tools.llm import redact
from tools.retrieval import retrieve

AGENTS = ("debater_a", "debater_b")


@dataclass(kw_only=True)
class MADKEContext(Context):
    """MADKE settings: which tool fills the shared evidence pool."""

    tool: ToolName = field(
        default="rag", metadata={"description": "Tool for the one shared retrieval: rag or search."}
    )


class MADKEState(DebateOutput, total=False):
    """The claim, the shared documents, the round counter and the round's decision."""

    claim: str
    evidence: list[Evidence]
    round: int
    decision: str


async def retrieve_once(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
    """Validate the claim and retrieve the shared documents with the claim as query."""
    ctx = settings(runtime, MADKEContext)
    claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
    errors: list[ErrorRecord] = []
    try:
        docs = await retrieve(ctx.tool, claim, k=ctx.top_k, collection=ctx.collection,
                              milvus_uri=ctx.milvus_uri, search_backend_name=ctx.search_backend,
                              timeout=ctx.call_timeout_s)
    except Exception as exc:  # backends raise many types; debate without documents
        docs = []
        kind = "timeout" if isinstance(exc, TimeoutError) else "tool_error"
        errors.append(ErrorRecord(round=0, agent="retriever", stage="retrieve", kind=kind,
                                  message=redact(f"{ctx.tool}: {type(exc).__name__}: {exc}")))
    return {"claim": claim, "evidence": docs, "round": 1, "rounds": 1, "errors": errors}


def make_debater(agent: str) -> Any:
    """Build the answer node of ``agent``."""

    async def debate(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
        ctx = settings(runtime, MADKEContext)
        round_no, docs = state["round"], state.get("evidence", [])
        shared = {"agent": agent.replace("_", " "), "claim": state["claim"],
                  "evidence": render_evidence(docs, ctx.max_doc_chars),
                  "evidence_rules": prompts.EVIDENCE_RULES,
                  "label_instructions": prompts.LABEL_INSTRUCTIONS}
        if round_no == 1:
            prompt = prompts.MADKE_FIRST.format(**shared)
        else:
            others = [turn_of(state.get("transcript", []), a, round_no - 1) for a in AGENTS
                      if a != agent]
            text = "\n".join(f"- {t.get('agent')}: {t.get('answer') or '(no answer)'}"
                             for t in others if t) or "(none)"
            prompt = prompts.MADKE_NEXT.format(**shared, others=text)
        model = await model_for(ctx, "debater")
        reply = await ask_label(model, prompt, role="debater", agent=agent, stage="argue",
                                round_no=round_no, timeout=ctx.call_timeout_s,
                                retries=ctx.model_retries)
        turn = Turn(round=round_no, agent=agent, tool=ctx.tool, query=state["claim"],
                    evidence=docs, answer=reply.text, label=reply.label)
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
        return {"decision": "consensus", "verdict": turns[0]["label"],
                "stop_reason": "consensus",
                "justification": f"All debaters concluded {turns[0]['label']} in round "
                f"{round_no}. {turns[0].get('answer', '')}".strip()}
    spent = over_budget(state.get("cost", {}), ctx)
    if spent:  # no budget for another round or the judge: stop, keep the transcript
        return {"decision": "budget_exhausted", "verdict": None, "stop_reason": "budget_exhausted",
                "justification": f"Stopped before a verdict: {spent}.",
                "errors": [ErrorRecord(round=round_no, agent="check", stage="budget",
                                       kind="budget_exhausted", message=spent)]}
    if round_no >= ctx.max_rounds:
        return {"decision": "judge"}
    return {"decision": "next_round", "round": round_no + 1, "rounds": round_no + 1}


async def judge(state: MADKEState, runtime: Runtime[MADKEContext]) -> dict[str, Any]:
    """Decide from the shared documents and the last answers."""
    ctx = settings(runtime, MADKEContext)
    round_no = state["round"]
    last = [t for a in AGENTS if (t := turn_of(state.get("transcript", []), a, round_no))]
    prompt = prompts.MADKE_JUDGE.format(
        evidence_rules=prompts.EVIDENCE_RULES, label_instructions=prompts.LABEL_INSTRUCTIONS,
        claim=state["claim"],
        answers="\n".join(f"- {t.get('agent')}: {t.get('answer') or '(no answer)'}" for t in last),
        evidence=render_evidence(state.get("evidence", []), ctx.max_doc_chars),
    )
    model = await model_for(ctx, "judge")
    reply = await ask_label(model, prompt, role="judge", agent="judge", stage="judge",
                            round_no=round_no, timeout=ctx.call_timeout_s,
                            retries=ctx.model_retries)
    return {"verdict": reply.label, "justification": reply.text, "stop_reason": "round_limit",
            "cost": reply.cost, "errors": reply.errors}


def route_after_check(state: MADKEState) -> Literal["next_round", "judge", "__end__"]:
    """Conditional edge after the agreement check."""
    decision = state.get("decision")
    if decision in ("consensus", "budget_exhausted"):
        return "__end__"
    return "judge" if decision == "judge" else "next_round"


async def next_round(state: MADKEState) -> dict[str, Any]:
    """Fan-out point of a new round (the round counter was already advanced)."""
    return {}


builder = StateGraph(MADKEState, context_schema=MADKEContext, input_schema=ClaimInput,
                     output_schema=DebateOutput)
builder.add_node("retrieve_once", retrieve_once)
builder.add_node("next_round", next_round)
builder.add_node("check", check)
builder.add_node("judge", judge)
builder.add_edge(START, "retrieve_once")
for name in AGENTS:
    builder.add_node(name, make_debater(name))
    builder.add_edge("retrieve_once", name)
    builder.add_edge("next_round", name)
builder.add_edge(list(AGENTS), "check")
builder.add_conditional_edges("check", route_after_check,
                              {"next_round": "next_round", "judge": "judge", END: END})
builder.add_edge("judge", END)

graph = builder.compile(name="madke")
