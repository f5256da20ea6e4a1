"""Retrieval as every node needs it: a failing backend yields no documents and one error record."""

from __future__ import annotations

from factdebate.nodes.context import Context
from factdebate.tools.core.evidence_hook import EvidenceMissError
from factdebate.tools.core.records import ErrorRecord, Evidence
from factdebate.tools.dispatch import retrieve
from factdebate.tools.models.llm import redact
from factdebate.tools.retrieval.manifest import IndexUnavailableError


async def retrieve_or_record(
    ctx: Context,
    tool: str,
    query: str,
    *,
    agent: str,
    round_no: int,
    stage: str = "retrieve",
    claim: str = "",
) -> tuple[list[Evidence], list[ErrorRecord]]:
    """Run ``query`` through ``tool`` with the run's top-k, index and timeout settings.

    Any backend fault is caught (backends raise many types): the caller goes on without
    documents, and the fault is recorded as ``timeout`` or ``tool_error``. An index that
    exists but cannot be used (held by another process, inconsistent), or a replayed call the
    frozen evidence does not hold, is raised instead: the run must not reach a verdict
    without the evidence it asked for. ``claim`` (the item's claim or question) lets frozen
    evidence find the item's pool where no session marked the item (a server's run).
    """
    try:
        docs = await retrieve(
            tool,
            query,
            k=ctx.top_k,
            collection=ctx.collection,
            milvus_uri=ctx.milvus_uri,
            search_backend_name=ctx.search_backend,
            rag_engine=ctx.rag_engine,
            timeout=ctx.call_timeout_s,
            embed_model=ctx.embed_model,
            rerank_model=ctx.rerank_model,
            agent=agent,
            evidence_from=ctx.evidence_from,
            search_cache=(ctx.search_cache_ttl_s, ctx.search_cache_max_mb),
            evidence_scope=ctx.evidence_scope,
            evidence_miss=ctx.evidence_miss,
            claim=claim,
        )
    except (IndexUnavailableError, EvidenceMissError):  # the item stops: see the docstring
        raise
    except Exception as exc:  # recorded, never raised: see the docstring
        kind = "timeout" if isinstance(exc, TimeoutError) else "tool_error"
        message = redact(f"{tool}: {type(exc).__name__}: {exc}")
        return [], [
            ErrorRecord(round=round_no, agent=agent, stage=stage, kind=kind, message=message)
        ]
    return list(docs), []
