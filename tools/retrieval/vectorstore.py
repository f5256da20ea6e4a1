"""Searches of a Milvus collection (Lite by default, a server by URI): dense, BM25, hybrid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factdebate.tools.core.records import Evidence
from factdebate.tools.retrieval.embeddings import encoder_for, spec_of
from factdebate.tools.retrieval.full_text import SPARSE, has_function, query_terms
from factdebate.tools.retrieval.manifest import (
    IndexMismatchError,
    IndexMissingError,
    Manifest,
)
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.milvus import milvus_client, milvus_lock, milvus_uri
from factdebate.tools.retrieval.ranking import RRF_K, Passage, best_per_document

_verified: set[tuple[str, str]] = set()
MAX_FETCH = 16_384  # Milvus's own cap on one search's result count
READ_CONSISTENCY = "Bounded"
"""Searches of a finished (never written again) generation need not wait for the newest
timestamp: on a server, Strong consistency added about 200 ms to every search."""
MIN_EF = 64  # HNSW search breadth floor (it is raised to the number of hits asked for)


def collection_exists(collection: str, uri: str = "") -> bool:
    """Whether ``collection`` has a live, compatible index with its Milvus part present.

    Raises:
        IndexUnavailableError: the Milvus index cannot be opened (checked first).
    """
    client = milvus_client(milvus_uri(uri))
    try:
        manifest = live_manifest(collection, uri)
    except (IndexMissingError, IndexMismatchError):
        return False
    with milvus_lock:
        return bool(client.has_collection(manifest.milvus_name))


def _checked(client: Any, manifest: Manifest, uri: str) -> None:
    """Load the generation once per process and check its row count against the manifest."""
    key = (uri, manifest.milvus_name)
    if key in _verified:
        return
    if not client.has_collection(manifest.milvus_name):
        raise IndexMismatchError(
            f"the manifest of {manifest.collection!r} names a Milvus collection that is missing "
            f"at {uri}: re-run `factdebate index PATH --collection {manifest.collection}`"
        )
    if manifest.lexical == "milvus" and not has_function(
        client.describe_collection(manifest.milvus_name)
    ):
        raise IndexMismatchError(
            f"the manifest of {manifest.collection!r} says Milvus holds its BM25 index, but "
            f"{manifest.milvus_name} at {uri} has no BM25 function: re-run `factdebate index "
            f"PATH --collection {manifest.collection}`"
        )
    client.load_collection(manifest.milvus_name)
    rows = int(
        client.query(
            manifest.milvus_name,
            filter="",
            output_fields=["count(*)"],
            consistency_level="Strong",
        )[0]["count(*)"]
    )
    if rows != manifest.passages:
        raise IndexMismatchError(
            f"Milvus holds {rows} passages of {manifest.collection!r} but its manifest says "
            f"{manifest.passages}: re-run `factdebate index PATH --collection "
            f"{manifest.collection}`"
        )
    _verified.add(key)


def passage_depth(k: int, passages: int) -> int:
    """How many passages to fetch so that ``k`` distinct documents usually remain after grouping."""
    return min(max(8 * k, 100), MAX_FETCH, passages)


def search_params(manifest: Manifest, limit: int) -> dict[str, Any]:
    """Search parameters for the manifest's dense index (HNSW's ``ef`` at least ``limit``)."""
    if manifest.dense_index == "HNSW":
        return {"metric_type": "COSINE", "params": {"ef": max(MIN_EF, limit)}}
    return {}


def _search(
    manifest: Manifest, k: int, uri: str, data: Any, anns_field: str, params: dict[str, Any]
) -> list[Any]:
    """One Milvus search of the generation's passages (ids and documents, no texts)."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        _checked(client, manifest, milvus_uri(uri))
        hits: list[Any] = client.search(
            collection_name=manifest.milvus_name,
            data=[data],
            anns_field=anns_field,
            limit=passage_depth(k, manifest.passages),
            output_fields=["doc"],  # texts only for the passages shown (passages_by_id)
            search_params=params,
            consistency_level=READ_CONSISTENCY,
        )[0]
    return hits


def dense_hits(manifest: Manifest, query: str, k: int, uri: str = "") -> list[Hit]:
    """The ``k`` best distinct documents as ``(document, best passage id, cosine)``, no texts."""
    vector = encoder_for(spec_of(manifest)).embed_query(query)  # the index's own encoder
    params = search_params(manifest, passage_depth(k, manifest.passages))
    return _distinct(_search(manifest, k, uri, vector, "vector", params), k)


Hit = tuple[str, str, float]
"""A distinct document found: ``(document, its best passage's id, score)``."""


def _distinct(hits: Sequence[Any], k: int, score: Any = float) -> list[Hit]:
    """The first ``k`` distinct documents of Milvus hits, best first."""
    best = best_per_document(((str(h["entity"].get("doc", "")), i) for i, h in enumerate(hits)), k)
    return [(doc, str(hits[i]["id"]), score(hits[i]["distance"])) for doc, i in best]


def full_text_hits(manifest: Manifest, query: str, k: int, uri: str = "") -> list[Hit]:
    """The ``k`` best distinct documents by Milvus's BM25 function, no texts.

    Scores are BM25 scores (Milvus Lite reports them negated; they are shown positive). A
    query with no terms left after analysis (only stopwords) finds nothing.
    """
    terms = query_terms(query)
    if not terms:
        return []
    hits = _search(manifest, k, uri, terms, SPARSE, {"metric_type": "BM25"})
    return _distinct(hits, k, lambda distance: abs(float(distance)))


def hybrid_hits(
    manifest: Manifest, query: str, k: int, uri: str = "", rrf_k: int = RRF_K
) -> list[Hit]:
    """The ``k`` best distinct documents by one Milvus hybrid search, no texts.

    Milvus fuses the dense and the BM25 passage rankings with ``RRFRanker(rrf_k)`` (equal
    weights); passages are then grouped by document. Scores are the fused RRF scores.
    """
    from pymilvus import AnnSearchRequest, RRFRanker

    client = milvus_client(milvus_uri(uri))
    vector = encoder_for(spec_of(manifest)).embed_query(query)
    fetch = passage_depth(k, manifest.passages)
    requests = [
        AnnSearchRequest(
            data=[vector], anns_field="vector", param=search_params(manifest, fetch), limit=fetch
        )
    ]
    terms = query_terms(query)
    if terms:  # a query of stopwords only is ranked by the dense search alone
        requests.append(AnnSearchRequest(data=[terms], anns_field=SPARSE, param={}, limit=fetch))
    with milvus_lock:
        _checked(client, manifest, milvus_uri(uri))
        hits = client.hybrid_search(
            collection_name=manifest.milvus_name,
            reqs=requests,
            ranker=RRFRanker(rrf_k),
            limit=fetch,
            output_fields=["doc"],
            consistency_level=READ_CONSISTENCY,
        )[0]
    return _distinct(hits, k)


def with_texts(
    manifest: Manifest, hits: Sequence[Hit], uri: str = ""
) -> list[tuple[str, Passage, float]]:
    """Hits with their passages' titles and texts read from Milvus."""
    shown = passages_by_id(manifest, [passage for _, passage, _ in hits], uri)
    out = []
    for doc, passage, score in hits:
        row = shown.get(passage)
        title, text = (row["title"], row["text"]) if row else ("", "")
        out.append((doc, Passage(id=passage, doc=doc, title=title, text=text), score))
    return out


def to_evidence(passage: Passage, source: str, score: float) -> Evidence:
    """A passage as the evidence shown to agents, named by its document's id."""
    return Evidence(
        id=passage["doc"], title=passage["title"], text=passage["text"], source=source, score=score
    )


def shown(manifest: Manifest, hits: Sequence[Hit], source: str, uri: str = "") -> list[Evidence]:
    """Hits as the evidence shown to agents, titles and texts read from Milvus."""
    return [to_evidence(p, source, score) for _, p, score in with_texts(manifest, hits, uri)]


def passages_by_id(manifest: Manifest, ids: Sequence[str], uri: str = "") -> dict[str, Passage]:
    """The stored passages with these ids (title and text read from Milvus)."""
    if not ids:
        return {}
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        rows = client.get(
            collection_name=manifest.milvus_name,
            ids=list(ids),
            output_fields=["doc", "title", "text"],
            consistency_level=READ_CONSISTENCY,
        )
    return {
        str(row["id"]): Passage(
            id=str(row["id"]),
            doc=str(row.get("doc", "")),
            title=str(row.get("title", "")),
            text=str(row.get("text", "")),
        )
        for row in rows
    }


def dense_rank(
    manifest: Manifest, query: str, k: int, uri: str = ""
) -> list[tuple[str, Passage, float]]:
    """The ``k`` best distinct documents by cosine similarity of their best passage."""
    return with_texts(manifest, dense_hits(manifest, query, k, uri), uri)


def dense_search(collection: str, query: str, k: int, uri: str = "") -> list[Evidence]:
    """Top-``k`` distinct documents by cosine similarity, each shown by its best passage."""
    manifest = live_manifest(collection, uri)
    return shown(manifest, dense_hits(manifest, query, k, uri), "milvus", uri)
