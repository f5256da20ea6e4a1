"""Retrieval: run a debater's query through its own tool and keep the top-k documents."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graphs.context import ToolMADContext
from graphs.state import ErrorRecord, ToolMADState, Turn
from nodes.common import Node, settings
from tools.llm import redact
from tools.retrieval import retrieve


def make_retrieve_node(agent: str) -> Node:
    """Build the retrieval node of ``agent``; a failing tool leaves it without documents."""

    async def retrieve_evidence(
        state: ToolMADState, runtime: Runtime[ToolMADContext]
    ) -> dict[str, Any]:
        ctx = settings(runtime, ToolMADContext)
        draft = Turn(**state["drafts"][agent])
        errors: list[ErrorRecord] = []
        try:
            draft["evidence"] = await retrieve(
                draft["tool"],
                draft.get("query", ""),
                k=ctx.top_k,
                collection=ctx.collection,
                milvus_uri=ctx.milvus_uri,
                search_backend_name=ctx.search_backend,
                timeout=ctx.call_timeout_s,
            )
        except Exception as exc:  # backends raise many types; the debate goes on without them
            draft["evidence"] = []
            kind = "timeout" if isinstance(exc, TimeoutError) else "tool_error"
            errors.append(
                ErrorRecord(
                    round=state["round"],
                    agent=agent,
                    stage="retrieve",
                    kind=kind,
                    message=redact(f"{draft['tool']}: {type(exc).__name__}: {exc}"),
                )
            )
        return {"drafts": {agent: draft}, "errors": errors}

    retrieve_evidence.__name__ = f"retrieve_{agent}"
    return retrieve_evidence
