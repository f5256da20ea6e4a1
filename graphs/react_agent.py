"""Single-agent ReAct baseline: one agent alternates search and reasoning, then answers.

A small explicit loop rather than tool calling, so any chat model (including the embedded
one and scripted test models) can drive it: the agent writes `SEARCH: [query]` to retrieve
with its tool, or an answer ending with a label. After ``max_steps`` searches it must answer.
With ``query_formulation`` off the claim itself is searched once and the agent answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.context import Context, ToolName
from graphs.state import ClaimInput, DebateOutput, ErrorRecord, Turn
from nodes.claims import clean_claim
from nodes.common import model_for, settings
from nodes.evidence_block import render_evidence
from nodes.parse import ParseFailure, parse_label, parse_query
from prompts import baselines as prompts
from tools.llm import ask, redact
from tools.retrieval import retrieve

_SEARCH_RE = re.compile(r"^\W*SEARCH\s*:", re.IGNORECASE | re.MULTILINE)


@dataclass(kw_only=True)
class ReactContext(Context):
    """ReAct settings: the agent's tool, its search budget, and query formulation."""

    tool: ToolName = field(
        default="rag", metadata={"description": "The agent's retrieval tool: rag or search."}
    )
    max_steps: int = field(
        default=3, metadata={"description": "Most searches the agent may run before answering."}
    )
    query_formulation: bool = field(
        default=True,
        metadata={"description": "The agent writes its queries; off = one search with the claim."},
    )

    def __post_init__(self) -> None:
        """Check the ReAct settings after the shared ones."""
        super().__post_init__()
        if self.max_steps < 0:
            raise ValueError(f"max_steps must be >= 0, got {self.max_steps}")


class ReactState(DebateOutput, total=False):
    """The claim, searches used, the query waiting to run, and the agent's last move."""

    claim: str
    searches: int
    pending_query: str
    decision: str


async def start(state: ReactState, runtime: Runtime[ReactContext]) -> dict[str, Any]:
    """Validate the claim; without query formulation, queue the claim as the only query."""
    ctx = settings(runtime, ReactContext)
    claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
    if ctx.query_formulation or ctx.tool == "none":
        return {"claim": claim, "searches": 0, "rounds": 0, "decision": "think"}
    return {"claim": claim, "searches": 0, "rounds": 0, "decision": "search",
            "pending_query": claim}


def render_history(transcript: list[Turn], max_doc_chars: int) -> str:
    """Render the searches so far with their documents."""
    searches = [t for t in transcript if t.get("query")]
    if not searches:
        return "(none yet)"
    return "\n\n".join(
        f"Search {i}: [{t.get('query')}]\n{render_evidence(t.get('evidence', []), max_doc_chars)}"
        for i, t in enumerate(searches, 1)
    )


async def think(state: ReactState, runtime: Runtime[ReactContext]) -> dict[str, Any]:
    """One agent step: request a search or give the final answer."""
    ctx = settings(runtime, ReactContext)
    used = state.get("searches", 0)
    budget = ctx.max_steps if ctx.query_formulation and ctx.tool != "none" else 0
    left = max(0, budget - used)
    prompt = prompts.REACT_STEP.format(
        tool_description=prompts.TOOL_DESCRIPTIONS[ctx.tool], searches_left=left,
        must_answer=prompts.MUST_ANSWER if left == 0 else "",
        evidence_rules=prompts.EVIDENCE_RULES, label_instructions=prompts.LABEL_INSTRUCTIONS,
        claim=state["claim"], history=render_history(state.get("transcript", []),
                                                      ctx.max_doc_chars),
    )
    step = used + 1
    model = await model_for(ctx, "debater")
    reply = await ask(model, prompt, role="debater", agent="react", stage="think",
                      round_no=step, timeout=ctx.call_timeout_s)
    errors: list[ErrorRecord] = list(reply.errors)
    update: dict[str, Any] = {"cost": reply.cost, "errors": errors}
    text = reply.text or ""
    if reply.text is not None and left > 0 and _SEARCH_RE.search(text):
        query = parse_query(text)
        if isinstance(query, str):
            return {**update, "decision": "search", "pending_query": query}
        errors.append(ErrorRecord(round=step, agent="react", stage="think", kind="parse_error",
                                  message=f"{query.reason}; the agent must answer now",
                                  raw=query.raw[:2000]))
        return {**update, "decision": "think", "searches": budget}
    verdict: str | None = None
    if reply.text is not None:
        label = parse_label(text)
        if isinstance(label, ParseFailure):
            errors.append(ErrorRecord(round=step, agent="react", stage="answer",
                                      kind="parse_error", message=label.reason,
                                      raw=label.raw[:2000]))
        else:
            verdict = label
    turn = Turn(round=step, agent="react", tool=ctx.tool, evidence=[], answer=text, label=verdict)
    return {**update, "decision": "answer", "verdict": verdict, "justification": text,
            "stop_reason": "answered", "rounds": step, "transcript": [turn]}


async def act(state: ReactState, runtime: Runtime[ReactContext]) -> dict[str, Any]:
    """Run the pending query through the agent's tool."""
    ctx = settings(runtime, ReactContext)
    step, query = state.get("searches", 0) + 1, state.get("pending_query", "")
    errors: list[ErrorRecord] = []
    try:
        docs = await retrieve(ctx.tool, query, k=ctx.top_k, collection=ctx.collection,
                              milvus_uri=ctx.milvus_uri, search_backend_name=ctx.search_backend,
                              timeout=ctx.call_timeout_s)
    except Exception as exc:  # backends raise many types; the agent goes on without them
        docs = []
        kind = "timeout" if isinstance(exc, TimeoutError) else "tool_error"
        errors.append(ErrorRecord(round=step, agent="react", stage="retrieve", kind=kind,
                                  message=redact(f"{ctx.tool}: {type(exc).__name__}: {exc}")))
    turn = Turn(round=step, agent="react", tool=ctx.tool, query=query, evidence=docs)
    return {"searches": step, "transcript": [turn], "errors": errors}


def route_after_start(state: ReactState) -> Literal["act", "think"]:
    """Search with the claim first (no query formulation) or let the agent think."""
    return "act" if state.get("decision") == "search" else "think"


def route_after_think(state: ReactState) -> Literal["act", "think", "__end__"]:
    """Run the requested search, ask again after an unreadable search, or finish."""
    decision = state.get("decision")
    if decision == "search":
        return "act"
    return "think" if decision == "think" else "__end__"


builder = StateGraph(ReactState, context_schema=ReactContext, input_schema=ClaimInput,
                     output_schema=DebateOutput)
builder.add_node("start", start)
builder.add_node("think", think)
builder.add_node("act", act)
builder.add_edge(START, "start")
builder.add_conditional_edges("start", route_after_start, {"act": "act", "think": "think"})
builder.add_conditional_edges("think", route_after_think,
                              {"act": "act", "think": "think", END: END})
builder.add_edge("act", "think")

graph = builder.compile(name="react")
