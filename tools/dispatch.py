"""Dispatch a debater's tool ('rag', 'search', 'none') to its backend, with a timeout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Literal

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.evidence_hook import (
    EvidenceCall,
    EvidenceMissError,
    LiveAnswer,
    current_hook,
    current_item,
    frozen_hook,
)
from factdebate.tools.core.records import Evidence, ModelConfigError
from factdebate.tools.core.threads import in_daemon_thread
from factdebate.tools.retrieval.embeddings import EncoderMismatchError, encoder_for, spec_of
from factdebate.tools.retrieval.index import ensure_index
from factdebate.tools.retrieval.lexical_search import FETCH_DOCS, lexical_index, to_evidence
from factdebate.tools.retrieval.manifest import IndexMismatchError, IndexUnavailableError
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.ranking import RRF_K, Passage, rrf
from factdebate.tools.retrieval.rerank import RERANK_DEPTH, rerank
from factdebate.tools.retrieval.vectorstore import (
    dense_hits,
    dense_search,
    hybrid_hits,
    passages_by_id,
    shown,
)
from factdebate.tools.websearch.backends import search_backend, web_backend_name
from factdebate.tools.websearch.cache import cached_search

ToolFn = Callable[[str, int], list[Evidence]]
RagEngine = Literal["dense", "hybrid"]
RAG_ENGINES: tuple[RagEngine, ...] = ("dense", "hybrid")
DENSE_WEIGHT = 1.0  # weight of the dense ranking in hybrid fusion (stemmed BM25 has 1.0)
_overrides: dict[str, ToolFn] = {}


def override_tool(name: str, fn: ToolFn | None) -> None:
    """Replace the backend behind a tool name; ``None`` restores the built-in one.

    Used for custom retrievers from Python and for fault-injection tests.
    """
    if fn is None:
        _overrides.pop(name, None)
    else:
        _overrides[name] = fn


def hybrid_search(
    collection: str,
    query: str,
    k: int,
    milvus_uri: str = "",
    *,
    dense_weight: float = DENSE_WEIGHT,
    rrf_k: int = RRF_K,
) -> list[Evidence]:
    """Fuse dense (the index's encoder) and stemmed BM25 document rankings by weighted RRF.

    Where Milvus holds the BM25 index (``manifest.lexical == "milvus"``) one Milvus hybrid
    search fuses the two passage rankings (equal weights only) and the texts come from Milvus.
    With bm25s shards each engine ranks distinct documents (``max(k, FETCH_DOCS)`` deep) and a
    document is shown by the passage of the engine that ranked it higher.

    Raises:
        SettingsError: a dense weight other than 1 on an index whose BM25 is in Milvus.
    """
    manifest = live_manifest(collection, milvus_uri)
    if manifest.lexical == "milvus":
        if dense_weight != 1.0:
            raise SettingsError(
                f"{collection!r} fuses inside Milvus (RRF, equal weights): a dense weight of "
                f"{dense_weight} needs an index built with lexical=bm25s"
            )
        return shown(
            manifest, hybrid_hits(manifest, query, k, milvus_uri, rrf_k), "hybrid", milvus_uri
        )
    depth = max(k, FETCH_DOCS)
    dense = dense_hits(manifest, query, depth, milvus_uri)
    lexical = lexical_index(manifest)
    lexical_ranked = lexical.rank(query, depth)
    fused = rrf(
        [[doc for doc, _, _ in dense], [doc for doc, _ in lexical_ranked]],
        [dense_weight, 1.0],
        rrf_k,
    )[:k]
    dense_at = {doc: (rank, passage) for rank, (doc, passage, _) in enumerate(dense)}
    lexical_at = {doc: (rank, index) for rank, (doc, index) in enumerate(lexical_ranked)}
    by_lexical = {  # each shown document by the passage of the engine that ranked it higher
        doc: lexical_at[doc][1]
        for doc, _ in fused
        if lexical_at.get(doc, (depth, 0))[0] < dense_at.get(doc, (depth, ""))[0]
    }
    from_milvus = passages_by_id(
        manifest, [dense_at[doc][1] for doc, _ in fused if doc not in by_lexical], milvus_uri
    )
    found = []
    for doc, score in fused:
        if doc in by_lexical:
            passage = lexical.passages[by_lexical[doc]]
        else:
            passage_id = dense_at[doc][1]
            missing = Passage(id=passage_id, doc=doc, title="", text="")
            passage = from_milvus.get(passage_id, missing)
        found.append(to_evidence(passage, "hybrid", score))
    return found


def check_encoder(collection: str, embed_model: str, milvus_uri: str = "") -> None:
    """Refuse a run whose ``embed_model`` is not the encoder ``collection`` was built with.

    Raises:
        IndexMismatchError: another encoder, or one whose vectors differ from the index's.
        IndexUnavailableError: the index's encoder cannot be loaded here.
    """
    try:
        encoder_for(spec_of(live_manifest(collection, milvus_uri)), embed_model)
    except EncoderMismatchError as exc:
        raise IndexMismatchError(str(exc)) from exc
    except ModelConfigError as exc:
        raise IndexUnavailableError(str(exc)) from exc


def _rag(
    collection: str,
    query: str,
    k: int,
    milvus_uri: str,
    rag_engine: str,
    embed_model: str,
    rerank_model: str,
) -> list[Evidence]:
    """The 'rag' tool: dense or hybrid, then the cross-encoder over the top candidates."""
    ensure_index(collection, milvus_uri, lexical=rag_engine == "hybrid")
    check_encoder(collection, embed_model, milvus_uri)
    depth = max(k, RERANK_DEPTH) if rerank_model else k
    if rag_engine == "hybrid":
        found = hybrid_search(collection, query, depth, milvus_uri)
    else:
        found = dense_search(collection, query, depth, milvus_uri)
    if not rerank_model:
        return found
    try:
        return rerank(rerank_model, query, found, k)
    except ModelConfigError as exc:
        raise IndexUnavailableError(str(exc)) from exc


def _live(
    tool: str,
    query: str,
    k: int,
    collection: str,
    milvus_uri: str,
    backend: str,
    rag_engine: str,
    timeout: float,
    embed_model: str,
    rerank_model: str,
    search_cache: tuple[float, float] = (0.0, 0.0),
) -> list[Evidence]:
    """The real tool: the index or the web (through the search cache), as the settings name them.

    ``search_cache`` is ``(time to live in seconds, megabytes)``; a time of 0 searches live.
    """
    if tool in _overrides:
        return _overrides[tool](query, k)
    if tool == "rag":
        return _rag(collection, query, k, milvus_uri, rag_engine, embed_model, rerank_model)
    engine = search_backend(backend, collection, timeout, milvus_uri)
    if engine.name == "bm25":
        ensure_index(collection, milvus_uri)
    ttl_s, max_mb = search_cache
    return cached_search(engine, query, k, ttl_s=ttl_s, max_mb=max_mb)[0]


def _generation(collection: str, milvus_uri: str) -> tuple[str, str]:
    """The live index generation of ``collection`` and its encoder ("" each when unknown)."""
    try:
        manifest = live_manifest(collection, milvus_uri)
    except Exception:  # the call itself succeeded: the log just lacks the generation
        return "", ""
    return manifest.generation, manifest.embedding_model


def _run(
    tool: str,
    query: str,
    k: int,
    collection: str,
    milvus_uri: str,
    backend: str,
    rag_engine: str = "hybrid",
    timeout: float = 60.0,
    embed_model: str = "",
    rerank_model: str = "",
    agent: str = "",
    evidence_from: str = "",
    search_cache: tuple[float, float] = (0.0, 0.0),
    evidence_scope: str = "exact",
    evidence_miss: str = "stop",
    claim: str = "",
) -> list[Evidence]:
    if tool == "none":
        return []
    if tool not in _overrides and tool not in ("rag", "search"):
        raise SettingsError(f"unknown tool {tool!r}: expected rag, search or none")
    if tool in _overrides:
        kind = "custom"
    elif tool == "rag":
        if rag_engine not in RAG_ENGINES:
            raise SettingsError(f"unknown rag_engine {rag_engine!r}: expected dense or hybrid")
        kind = rag_engine
    else:
        kind = web_backend_name(backend)
    reads_index = tool in _overrides or tool == "rag" or kind == "offline"

    def live() -> LiveAnswer:
        args = (milvus_uri, backend, rag_engine, timeout, embed_model, rerank_model)
        docs = _live(tool, query, k, collection, *args, search_cache)
        if not reads_index or kind == "custom":
            return LiveAnswer(docs, "")
        return LiveAnswer(docs, *_generation(collection, milvus_uri))

    hook = current_hook()
    if hook is None and evidence_from:  # a run with no session (a server's): opened here
        hook = frozen_hook(evidence_from, evidence_scope, evidence_miss)
        if hook is None:  # frozen evidence asked for, but nothing here can serve it
            raise EvidenceMissError(
                f"evidence_from={evidence_from!r} is set but this process serves no frozen "
                "evidence (run it through factdebate verify, bench or the Python API)"
            )
    if hook is None:
        return live().docs
    item, marked = current_item()
    claim = marked or claim
    options = {"rerank": rerank_model, "embed_model": embed_model} if tool == "rag" else {}
    call = EvidenceCall(
        tool=tool,
        backend=kind,
        query=query,
        k=k,
        collection=collection,
        item=item,
        claim=claim,
        agent=agent,
        options=json.dumps(options, sort_keys=True) if options else "",
    )
    return hook.serve(call, live)


def run_tool(
    tool: str,
    query: str,
    *,
    k: int,
    collection: str,
    milvus_uri: str = "",
    search_backend_name: str = "auto",
    rag_engine: str = "hybrid",
    embed_model: str = "",
    rerank_model: str = "",
) -> list[Evidence]:
    """One retrieval, synchronously: exactly what a debater's tool returns (benchmarks use it)."""
    return _run(
        tool,
        query,
        k,
        collection,
        milvus_uri,
        search_backend_name,
        rag_engine,
        embed_model=embed_model,
        rerank_model=rerank_model,
    )


async def retrieve(
    tool: str,
    query: str,
    *,
    k: int,
    collection: str,
    milvus_uri: str = "",
    search_backend_name: str = "auto",
    rag_engine: str = "hybrid",
    timeout: float = 60.0,
    embed_model: str = "",
    rerank_model: str = "",
    agent: str = "",
    evidence_from: str = "",
    search_cache: tuple[float, float] = (0.0, 0.0),
    evidence_scope: str = "exact",
    evidence_miss: str = "stop",
    claim: str = "",
) -> list[Evidence]:
    """Run one retrieval off the event loop; raises on failure or timeout (callers record it).

    The installed evidence hook (``tools.core.evidence_hook``) sees the call: it records what
    the tool returned, or answers from frozen evidence. ``agent`` names the asker in the log.
    In a process with no hook (a server's run), ``evidence_from`` (the run's setting) is
    answered by the frozen evidence the process serves (``serve_frozen_with``) in
    ``evidence_scope``, the item known by ``claim``, or the call is refused.
    """
    # a daemon thread: a backend that never returns (a dripping socket) cannot hold the exit
    return await asyncio.wait_for(
        in_daemon_thread(
            _run,
            tool,
            query,
            k,
            collection,
            milvus_uri,
            search_backend_name,
            rag_engine,
            timeout,
            embed_model,
            rerank_model,
            agent,
            evidence_from,
            search_cache,
            evidence_scope,
            evidence_miss,
            claim,
        ),
        timeout=timeout,
    )
