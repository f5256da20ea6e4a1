"""Milvus's own full-text (BM25 function) and hybrid search, measured beside our engines.

Not a debater engine: the retrieval benchmark builds a copy of a live collection with a
Milvus ``BM25`` function over its text and compares Milvus's full-text search and its
``hybrid_search`` (dense + full-text, ``RRFRanker``) with the engines debaters use. On
Milvus Lite 3.2.2 the copy cannot stem: the standard analyzer accepts ``stemmer`` and
``stop`` filters and ignores them (tests pin this), and no ``english`` analyzer exists.
"""

from __future__ import annotations

import time
from typing import Any

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.retrieval.embeddings import encoder_for, spec_of
from factdebate.tools.retrieval.manifest import BM25_B, BM25_K1, Manifest, new_generation
from factdebate.tools.retrieval.milvus import drop_collections, locked_client
from factdebate.tools.retrieval.ranking import RRF_K, best_per_document
from factdebate.tools.retrieval.vectorstore import passage_depth

MODES = ("bm25", "hybrid")
ANALYZER = {
    "tokenizer": "standard",
    "filter": ["lowercase", {"type": "stemmer", "language": "english"}],
}
"""Asked for; Milvus Lite 3.2.2 lowercases and ignores the stemmer."""
_TEXT = 8192  # Milvus VARCHAR bytes kept per passage (titles and passages are shorter)
_COPY_BATCH = 1000


def native_collection(manifest: Manifest) -> str:
    """Prefix of the Milvus collections holding full-text copies of ``manifest``'s collection."""
    return f"{manifest.collection}_native"


def build_native(manifest: Manifest, uri: str = "") -> tuple[str, float]:
    """Copy the live collection's vectors and texts into a new full-text collection.

    Earlier copies are dropped. Returns the new Milvus collection's name and the seconds the
    copy took (reading, BM25 encoding and indexing inside Milvus; no re-embedding).
    """
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    prefix = native_collection(manifest)
    name = f"{prefix}__{new_generation()}"
    start = time.perf_counter()
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("doc", DataType.VARCHAR, max_length=1024)
    schema.add_field(
        "text", DataType.VARCHAR, max_length=_TEXT, enable_analyzer=True, analyzer_params=ANALYZER
    )
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=spec_of(manifest).dim)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    index = MilvusClient.prepare_index_params()
    index.add_index(
        "sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={"bm25_k1": BM25_K1, "bm25_b": BM25_B},
    )
    index.add_index("vector", index_type="FLAT", metric_type="COSINE")
    drop_collections(prefix, keep="", uri=uri)
    with locked_client(uri) as client:
        client.create_collection(name, schema=schema, index_params=index)
        client.load_collection(manifest.milvus_name)
        for first in range(0, manifest.passages, _COPY_BATCH):  # ids are passage positions
            ids = list(range(first, min(first + _COPY_BATCH, manifest.passages)))
            rows = client.get(
                manifest.milvus_name, ids=ids, output_fields=["vector", "doc", "title", "text"]
            )
            client.insert(name, [_copy(row) for row in rows])
        client.flush(collection_name=name)
        client.load_collection(name)
    return name, time.perf_counter() - start


def _copy(row: dict[str, Any]) -> dict[str, Any]:
    text = f"{row['title']}\n{row['text']}".encode()[:_TEXT].decode("utf-8", "ignore")
    return {"id": row["id"], "doc": row["doc"], "text": text, "vector": row["vector"]}


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
            AnnSearchRequest(data=[query], anns_field="sparse", param={}, limit=fetch),
        ]
    with locked_client(uri) as client:
        if mode == "bm25":
            hits = client.search(
                name,
                data=[query],
                anns_field="sparse",
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
