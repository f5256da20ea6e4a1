"""Milvus's own analyzer over raw text, measured beside the engines debaters use.

Not a debater engine: the retrieval benchmark copies a live collection into one whose BM25
function reads the raw title and text through Milvus's English analyzer (``SERVER_ANALYZER``)
and compares its full-text and ``hybrid_search`` (``RRFRanker``) results with the engines
debaters use, which analyse text before Milvus sees it (``full_text``). On Milvus Lite 3.2.2
that analyzer cannot stem: it accepts ``stemmer`` and ``stop`` filters and ignores them
(tests pin this), and no ``english`` analyzer exists.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.retrieval.embeddings import encoder_for, spec_of
from factdebate.tools.retrieval.full_text import SERVER_ANALYZER, SPARSE, add_full_text, fit_bytes
from factdebate.tools.retrieval.manifest import Manifest, new_generation
from factdebate.tools.retrieval.milvus import drop_collections, locked_client
from factdebate.tools.retrieval.ranking import RRF_K, best_per_document
from factdebate.tools.retrieval.vectorstore import passage_depth

MODES = ("bm25", "hybrid")
_TEXT = 8192  # Milvus VARCHAR bytes kept per passage (titles and passages are shorter)
_COPY_BATCH = 1000


def native_collection(manifest: Manifest) -> str:
    """Prefix of the Milvus collections holding full-text copies of ``manifest``'s collection."""
    return f"{manifest.collection}_native"


def stored_rows(manifest: Manifest, uri: str = "") -> Iterator[dict[str, Any]]:
    """Every stored passage of ``manifest``'s generation with its vector, in id order."""
    with locked_client(uri) as client:
        client.load_collection(manifest.milvus_name)
    for first in range(0, manifest.passages, _COPY_BATCH):  # ids are passage positions
        ids = list(range(first, min(first + _COPY_BATCH, manifest.passages)))
        with locked_client(uri) as client:
            rows = client.get(
                manifest.milvus_name, ids=ids, output_fields=["vector", "doc", "title", "text"]
            )
        yield from sorted(rows, key=lambda row: int(row["id"]))


def stored_vectors(manifest: Manifest, uri: str = "") -> dict[str, list[float]]:
    """Each stored passage's embedded text (title, newline, text) mapped to its vector."""
    return {
        f"{row['title']}\n{row['text']}": [float(x) for x in row["vector"]]
        for row in stored_rows(manifest, uri)
    }


def build_native(manifest: Manifest, uri: str = "") -> tuple[str, float]:
    """Copy the live collection's vectors and texts into a new full-text collection.

    Earlier copies are dropped. Returns the new Milvus collection's name and the seconds the
    copy took (reading, BM25 encoding and indexing inside Milvus; no re-embedding).
    """
    from pymilvus import DataType, MilvusClient

    prefix = native_collection(manifest)
    name = f"{prefix}__{new_generation()}"
    start = time.perf_counter()
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("doc", DataType.VARCHAR, max_length=1024)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=spec_of(manifest).dim)
    index = MilvusClient.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="COSINE")
    add_full_text(schema, index, SERVER_ANALYZER)
    drop_collections(prefix, keep="", uri=uri)
    with locked_client(uri) as client:
        client.create_collection(name, schema=schema, index_params=index)
    batch: list[dict[str, Any]] = []
    for row in stored_rows(manifest, uri):
        batch.append(_copy(row))
        if len(batch) == _COPY_BATCH:
            with locked_client(uri) as client:
                client.insert(name, batch)
            batch = []
    with locked_client(uri) as client:
        if batch:
            client.insert(name, batch)
        client.flush(collection_name=name)
        client.load_collection(name)
    return name, time.perf_counter() - start


def _copy(row: dict[str, Any]) -> dict[str, Any]:
    text = fit_bytes(f"{row['title']}\n{row['text']}", _TEXT)
    return {"id": row["id"], "doc": row["doc"], "terms": text, "vector": row["vector"]}


def native_rank(
    name: str, manifest: Manifest, query: str, k: int, mode: str, uri: str = ""
) -> list[str]:
    """The ``k`` best distinct documents by Milvus full-text search or Milvus hybrid search.

    Passages are ranked by Milvus (``hybrid`` fuses the dense and full-text passage rankings
    with ``RRFRanker(60)``, as Milvus offers it), then grouped by document, best first.
    """
    from pymilvus import AnnSearchRequest, RRFRanker

    if mode not in MODES:
        raise SettingsError(f"unknown Milvus search mode {mode!r}: expected bm25 or hybrid")
    fetch = passage_depth(k, manifest.passages)
    requests = []
    if mode == "hybrid":
        vector = encoder_for(spec_of(manifest)).embed_query(query)
        requests = [
            AnnSearchRequest(data=[vector], anns_field="vector", param={}, limit=fetch),
            AnnSearchRequest(data=[query], anns_field=SPARSE, param={}, limit=fetch),
        ]
    with locked_client(uri) as client:
        if mode == "bm25":
            hits = client.search(
                name,
                data=[query],
                anns_field=SPARSE,
                limit=fetch,
                search_params={"metric_type": "BM25"},
                output_fields=["doc"],
            )[0]
        else:
            hits = client.hybrid_search(
                name, requests, RRFRanker(RRF_K), limit=fetch, output_fields=["doc"]
            )[0]
    ranked = ((str(hit["entity"]["doc"]), i) for i, hit in enumerate(hits))
    return [doc for doc, _ in best_per_document(ranked, k)]
