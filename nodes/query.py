"""Query formulation: a debater writes (round 1) or rewrites (later rounds) its search query."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graphs.context import ToolMADContext
from graphs.state import ErrorRecord, ToolMADState, Turn
from nodes.common import Node, answer_or_placeholder, model_for, settings, turn_of
from nodes.parse import ParseFailure, parse_query
from prompts import tool_mad as prompts
from tools.llm import ask


def make_query_node(agent: str, opponent: str) -> Node:
    """Build the query-formulation node of ``agent``."""

    async def formulate_query(
        state: ToolMADState, runtime: Runtime[ToolMADContext]
    ) -> dict[str, Any]:
        ctx = settings(runtime, ToolMADContext)
        claim, round_no = state["claim"], state["round"]
        draft = Turn(**state["drafts"][agent])
        previous = turn_of(state.get("transcript", []), agent, round_no - 1)
        fallback = previous.get("query", claim) if previous else claim
        if not ctx.query_formulation or draft["tool"] == "none":
            draft["query"] = claim if draft["tool"] != "none" else ""
            return {"drafts": {agent: draft}}
        role = prompts.render_debater_role(draft["tool"])
        if previous is None:
            prompt = prompts.FIRST_QUERY.format(role=role, claim=claim)
        else:
            opponent_turn = turn_of(state.get("transcript", []), opponent, round_no - 1)
            prompt = prompts.NEXT_QUERY.format(
                role=role,
                claim=claim,
                previous_query=fallback,
                opponent_answer=answer_or_placeholder(opponent_turn),
            )
        model = await model_for(ctx, "debater")
        reply = await ask(
            model,
            prompt,
            role="debater",
            agent=agent,
            stage="query",
            round_no=round_no,
            timeout=ctx.call_timeout_s,
            retries=ctx.model_retries,
        )
        errors = list(reply.errors)
        query = parse_query(reply.text) if reply.text is not None else None
        if isinstance(query, ParseFailure):
            errors.append(
                ErrorRecord(
                    round=round_no,
                    agent=agent,
                    stage="query",
                    kind="parse_error",
                    message=f"{query.reason}; searched with the previous query",
                    raw=query.raw[:2000],
                )
            )
        draft["query"] = query if isinstance(query, str) else fallback
        return {"drafts": {agent: draft}, "cost": reply.cost, "errors": errors}

    formulate_query.__name__ = f"query_{agent}"
    return formulate_query
