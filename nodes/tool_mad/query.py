"""Query formulation: a debater writes (round 1) or rewrites (later rounds) its search query."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import Node, answer_or_placeholder, model_for, settings, turn_of
from factdebate.nodes.evidence_block import QUERY_CHARS, sanitize
from factdebate.nodes.labelled import ask_parsed
from factdebate.nodes.parse import parse_query
from factdebate.nodes.state import Turn
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.state import ToolMADState
from factdebate.prompts import tool_mad as prompts

# Words a query may share with any claim without being about it.
_FILLER = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "with",
    }
)


def _stems(text: str) -> set[str]:
    """The text's content words, cut to five letters (so "located" meets "location")."""
    words = re.findall(r"\w+", text.casefold())
    return {word[:5] for word in words if word not in _FILLER}


def unusable_query(query: str, claim: str) -> str | None:
    """Why ``query`` cannot stand for ``claim``, or None when it can.

    A query that copies the prompts' example is unusable unless the claim is about the
    example's subject (Mount Everest); any other query must share a content word with the claim.
    """
    example = _stems(prompts.QUERY_EXAMPLE)
    if _stems(query) == example:
        subject = example & _stems(prompts.QUERY_EXAMPLE_CLAIM)
        return None if subject & _stems(claim) else "the query copies the prompt's example"
    if _stems(query) & _stems(claim):
        return None
    return "the query shares no word with the claim"


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
                previous_query=sanitize(fallback, QUERY_CHARS),
                opponent_answer=answer_or_placeholder(opponent_turn, ctx.max_doc_chars),
            )
        model = await model_for(ctx, "debater")
        site = ctx.site(role="debater", agent=agent, stage="query", round_no=round_no)
        reply = await ask_parsed(
            model, prompt, parse_query, site, on_failure="searched with the previous query"
        )
        draft["query"] = reply.value or fallback
        errors = list(reply.errors)
        if reply.value and (why := unusable_query(reply.value, claim)):
            draft["query"] = claim
            errors.append(site.error("query_replaced", f"{why}; searched the claim", reply.value))
        return {"drafts": {agent: draft}, "cost": reply.cost, "errors": errors}

    formulate_query.__name__ = f"query_{agent}"
    return formulate_query
