"""Retrieval: run a debater's query through its own tool and keep the top-k documents."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import Node, settings
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import Turn
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.state import ToolMADState


def make_retrieve_node(agent: str) -> Node:
    """Build the retrieval node of ``agent``; a failing tool leaves it without documents."""

    async def retrieve_evidence(
        state: ToolMADState, runtime: Runtime[ToolMADContext]
    ) -> dict[str, Any]:
        ctx = settings(runtime, ToolMADContext)
        draft = Turn(**state["drafts"][agent])
        draft["evidence"], errors = await retrieve_or_record(
            ctx,
            draft["tool"],
            draft.get("query", ""),
            agent=agent,
            round_no=state["round"],
            claim=state.get("claim", ""),
        )
        return {"drafts": {agent: draft}, "errors": errors}

    retrieve_evidence.__name__ = f"retrieve_{agent}"
    return retrieve_evidence
