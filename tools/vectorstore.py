"""Dense retrieval over Milvus (embedded Milvus Lite by default, any server by URI)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from tools.corpus import data_home
from tools.embeddings import EMBEDDING_DIM, default_embeddings
from tools.records import Evidence

_lock = threading.Lock()
_MAX_TEXT = 8192


class IndexMissingError(LookupError):
    """The requested collection has not been indexed."""

    def __init__(self, collection: str) -> None:
        super().__init__(
            f"no index named {collection!r}: run `factdebate index PATH --collection {collection}`"
        )


def milvus_uri(uri: str = "") -> str:
    """The Milvus URI to use: the given one or the Milvus Lite file under the data home."""
    return uri or str(data_home() / "milvus.db")


class IndexUnavailableError(RuntimeError):
    """The Milvus index exists (or should) but cannot be opened right now."""


@cache
def _client(uri: str) -> Any:
    import logging

    from pymilvus import MilvusClient

    logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)  # we report failures ourselves
    try:
        return MilvusClient(uri)
    except Exception as exc:  # pymilvus wraps lock and connection failures alike
        if "://" not in uri:  # Milvus Lite reports a held file lock only in its log
            hint = (
                "another process may be using this Milvus Lite file; stop it or set FACTDEBATE_HOME"
            )
        else:
            hint = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        raise IndexUnavailableError(f"cannot open the Milvus index at {uri}: {hint}") from exc


def collection_exists(collection: str, uri: str = "") -> bool:
    """Whether ``collection`` is indexed in Milvus."""
    with _lock:
        return bool(_client(milvus_uri(uri)).has_collection(collection))


def build_collection(
    collection: str,
    docs: Sequence[Evidence],
    uri: str = "",
    batch_size: int = 128,
    progress: Callable[[int], None] | None = None,
) -> None:
    """(Re)create ``collection`` with the embedded documents (cosine metric)."""
    client = _client(milvus_uri(uri))
    embeddings = default_embeddings()
    with _lock:
        if client.has_collection(collection):
            client.drop_collection(collection)
        client.create_collection(
            collection_name=collection,
            dimension=EMBEDDING_DIM,
            metric_type="COSINE",
            id_type="string",
            max_length=512,
        )
    for start in range(0, len(docs), batch_size):
        batch = docs[start : start + batch_size]
        vectors = embeddings.embed_documents([f"{d['title']}\n{d['text']}" for d in batch])
        rows = [
            {"id": d["id"][:512], "vector": v, "title": d["title"], "text": d["text"][:_MAX_TEXT]}
            for d, v in zip(batch, vectors, strict=True)
        ]
        with _lock:
            client.insert(collection_name=collection, data=rows)
        if progress:
            progress(len(batch))
    with _lock:
        client.flush(collection_name=collection)


def dense_search(collection: str, query: str, k: int, uri: str = "") -> list[Evidence]:
    """Top-``k`` documents by cosine similarity to ``query``."""
    client = _client(milvus_uri(uri))
    vector = default_embeddings().embed_query(query)
    with _lock:
        if not client.has_collection(collection):
            raise IndexMissingError(collection)
        client.load_collection(collection)
        hits = client.search(
            collection_name=collection, data=[vector], limit=k, output_fields=["title", "text"]
        )[0]
    return [
        Evidence(
            id=str(hit["id"]),
            title=str(hit["entity"].get("title", "")),
            text=str(hit["entity"].get("text", "")),
            source="milvus",
            score=float(hit["distance"]),
        )
        for hit in hits
    ]
