"""Single-verifier baseline (SAFE-like): one agent searches a few times, then rates the claim.

No debate and no roles: the agent writes ``search_steps`` queries one after another (each
new; repeats are recorded and not run), reading earlier results before each, then gives a
TRUE/FALSE rating from everything it found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.context import Context
from graphs.mad_fact_state import JuryTurn, KnowledgeEntry
from graphs.state import ClaimInput, DebateOutput, ErrorRecord
from nodes.claims import clean_claim
from nodes.common import model_for, settings
from nodes.jury import new_query, parse_truth, render_knowledge, render_used, used_queries
from nodes.parse import ParseFailure
from prompts import mad_fact as prompts
from tools.llm import ask, redact
from tools.retrieval import retrieve

AGENT = "verifier"


@dataclass(kw_only=True)
class SingleVerifierContext(Context):
    """Single-verifier settings: how many searches before the rating."""

    search_steps: int = field(
        default=3, metadata={"description": "Searches the verifier runs before rating (0-10)."}
    )
    query_attempts: int = field(
        default=2, metadata={"description": "Tries to write a query not used before."}
    )

    def __post_init__(self) -> None:
        """Check the settings after the shared ones."""
        super().__post_init__()
        if not 0 <= self.search_steps <= 10 or self.query_attempts < 1:
            raise ValueError("search_steps must be 0-10 and query_attempts >= 1")


class VerifierState(DebateOutput, total=False):
    """The claim, the searches so far and how many steps were used."""

    claim: str
    steps: int
    budget: int
    knowledge: list[KnowledgeEntry]


async def start(state: VerifierState, runtime: Runtime[SingleVerifierContext]) -> dict[str, Any]:
    """Validate the claim."""
    ctx = settings(runtime, SingleVerifierContext)
    return {"claim": clean_claim(state.get("claim"), ctx.max_claim_chars), "steps": 0,
            "knowledge": [], "rounds": 0, "budget": ctx.search_steps}


async def search(state: VerifierState, runtime: Runtime[SingleVerifierContext]) -> dict[str, Any]:
    """Write one new query and run it; a failed step still counts against the budget."""
    ctx = settings(runtime, SingleVerifierContext)
    step, knowledge = state.get("steps", 0) + 1, list(state.get("knowledge", []))
    shown = render_knowledge(knowledge, ctx.max_doc_chars)

    def prompt_for(used: list[str]) -> str:
        return prompts.VERIFIER_QUERY.format(claim=state["claim"], knowledge=shown,
                                             evidence_rules=prompts.EVIDENCE_RULES,
                                             used_queries=render_used(used))

    model = await model_for(ctx, "debater")
    query, cost, errors = await new_query(
        model, prompt_for, used_queries(knowledge), attempts=ctx.query_attempts,
        role="debater", agent=AGENT, round_no=step, timeout=ctx.call_timeout_s)
    if query is not None:
        try:
            docs = await retrieve("search", query, k=ctx.top_k, collection=ctx.collection,
                                  milvus_uri=ctx.milvus_uri,
                                  search_backend_name=ctx.search_backend,
                                  timeout=ctx.call_timeout_s)
        except Exception as exc:  # backends raise many types; the verifier goes on
            docs = []
            kind = "timeout" if isinstance(exc, TimeoutError) else "tool_error"
            errors.append(ErrorRecord(round=step, agent=AGENT, stage="search", kind=kind,
                                      message=redact(f"search: {type(exc).__name__}: {exc}")))
        knowledge.append(KnowledgeEntry(query=query, agent=AGENT, round=step, evidence=docs))
    return {"steps": step, "knowledge": knowledge, "cost": cost, "errors": errors}


async def rate(state: VerifierState, runtime: Runtime[SingleVerifierContext]) -> dict[str, Any]:
    """Rate the claim TRUE or FALSE from the search results."""
    ctx = settings(runtime, SingleVerifierContext)
    knowledge = state.get("knowledge", [])
    prompt = prompts.VERIFIER_RATE.format(
        claim=state["claim"], knowledge=render_knowledge(knowledge, ctx.max_doc_chars),
        evidence_rules=prompts.EVIDENCE_RULES)
    model = await model_for(ctx, "debater")
    reply = await ask(model, prompt, role="debater", agent=AGENT, stage="rate",
                      round_no=state.get("steps", 0), timeout=ctx.call_timeout_s)
    errors = list(reply.errors)
    verdict: str | None = None
    if reply.text is not None:
        parsed = parse_truth(reply.text)
        if isinstance(parsed, ParseFailure):
            errors.append(ErrorRecord(round=state.get("steps", 0), agent=AGENT, stage="rate",
                                      kind="parse_error", message=parsed.reason,
                                      raw=parsed.raw[:2000]))
        else:
            verdict = parsed
    turns = [JuryTurn(round=e["round"], agent=AGENT, tool="search", query=e["query"],
                      evidence=e["evidence"]) for e in knowledge]
    turns.append(JuryTurn(round=state.get("steps", 0), agent=AGENT, answer=reply.text or "",
                          label=verdict))
    return {"verdict": verdict, "justification": reply.text or "", "stop_reason": "answered",
            "rounds": state.get("steps", 0), "transcript": turns, "cost": reply.cost,
            "errors": errors}


def route_step(state: VerifierState) -> Literal["search", "rate"]:
    """Search until the step budget is used, then rate."""
    return "search" if state.get("steps", 0) < state.get("budget", 0) else "rate"


builder = StateGraph(VerifierState, context_schema=SingleVerifierContext,
                     input_schema=ClaimInput, output_schema=DebateOutput)
builder.add_node("start", start)
builder.add_node("search", search)
builder.add_node("rate", rate)
builder.add_edge(START, "start")
builder.add_conditional_edges("start", route_step, {"search": "search", "rate": "rate"})
builder.add_conditional_edges("search", route_step, {"search": "search", "rate": "rate"})
builder.add_edge("rate", END)

graph = builder.compile(name="single-verifier")
