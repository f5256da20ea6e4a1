"""Dense retrieval over Milvus (embedded Milvus Lite by default, any server by URI)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

from tools.corpus import data_home
from tools.embeddings import EMBEDDING_DIM, default_embeddings
from tools.manifest import (
    IndexMismatchError,
    IndexMissingError,
    IndexUnavailableError,
    Manifest,
    is_generation_of,
    live_manifest,
)
from tools.ranking import Passage, best_per_document
from tools.records import Evidence

__all__ = [
    "IndexMissingError",
    "IndexUnavailableError",
    "build_collection",
    "collection_exists",
    "dense_rank",
    "dense_search",
    "drop_collection",
    "drop_collections",
    "locked_client",
    "milvus_uri",
    "passage_depth",
]

_lock = threading.Lock()
_verified: set[tuple[str, str]] = set()
_MAX_TEXT = 8192
MAX_FETCH = 16_384  # Milvus's own cap on one search's result count
WAIT_ENV = "FACTDEBATE_INDEX_WAIT_S"
log = logging.getLogger("factdebate")


def milvus_uri(uri: str = "") -> str:
    """The Milvus URI to use: the given one or the Milvus Lite file under the data home."""
    return uri or str(data_home() / "milvus.db")


def wait_seconds() -> float:
    """How long to wait for a Milvus Lite file held by another process (0..600 s, default 10)."""
    raw = os.environ.get(WAIT_ENV, "10")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{WAIT_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 <= value <= 600:
        raise ValueError(f"{WAIT_ENV} must be 0..600 seconds, got {raw!r}")
    return value


def _open(uri: str) -> Any:
    from pymilvus import MilvusClient

    logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)  # we report failures ourselves
    return MilvusClient(uri)


@cache
def _client(uri: str) -> Any:
    deadline = time.monotonic() + wait_seconds()
    told = False
    while True:
        try:
            return _open(uri)
        except Exception as exc:  # pymilvus wraps lock and connection failures alike
            lite = "://" not in uri
            if lite and time.monotonic() < deadline:
                if not told:
                    log.warning(
                        "the Milvus Lite file %s is busy (another process?); waiting up to "
                        "%.0f s (%s)",
                        uri,
                        wait_seconds(),
                        WAIT_ENV,
                    )
                    told = True
                time.sleep(0.5)
                continue
            if lite:  # Milvus Lite reports a held file lock only in its log
                hint = (
                    "another process may be using this Milvus Lite file; stop it, wait, or "
                    "set FACTDEBATE_HOME"
                )
            else:
                hint = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise IndexUnavailableError(f"cannot open the Milvus index at {uri}: {hint}") from exc


@contextlib.contextmanager
def locked_client(uri: str = "") -> Iterator[Any]:
    """The shared Milvus client of ``uri``, used under the process-wide Milvus lock."""
    client = _client(milvus_uri(uri))
    with _lock:
        yield client


def collection_exists(collection: str, uri: str = "") -> bool:
    """Whether ``collection`` has a live, compatible index with its Milvus part present.

    Raises:
        IndexUnavailableError: the Milvus index cannot be opened (checked first).
    """
    client = _client(milvus_uri(uri))
    try:
        manifest = live_manifest(collection)
    except (IndexMissingError, IndexMismatchError):
        return False
    with _lock:
        return bool(client.has_collection(manifest.milvus_name))


def build_collection(
    name: str,
    passages: Sequence[Passage],
    uri: str = "",
    batch_size: int = 128,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Create the Milvus collection ``name`` (new, cosine metric) holding the embedded passages.

    Passages are embedded shortest first, so each batch pads its texts to similar lengths
    (in corpus order, SciFact's batches padded 2.16M tokens for 1.77M real ones); each row
    keeps its position in ``passages`` as its id.
    """
    client = _client(milvus_uri(uri))
    embeddings = default_embeddings()
    with _lock:
        if client.has_collection(name):
            client.drop_collection(name)
        client.create_collection(
            collection_name=name, dimension=EMBEDDING_DIM, metric_type="COSINE", id_type="int"
        )
    texts = [f"{p['title']}\n{p['text']}" for p in passages]
    order = sorted(range(len(passages)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        vectors = embeddings.embed_documents([texts[i] for i in batch])
        rows = [
            {
                "id": i,
                "vector": vector,
                "doc": passages[i]["doc"],
                "title": passages[i]["title"],
                "text": passages[i]["text"][:_MAX_TEXT],
            }
            for i, vector in zip(batch, vectors, strict=True)
        ]
        with _lock:
            client.insert(collection_name=name, data=rows)
        if progress:
            progress(len(batch))
    with _lock:
        client.flush(collection_name=name)


def drop_collection(name: str, uri: str = "") -> None:
    """Drop the Milvus collection ``name`` if it exists (a failed build's leftovers)."""
    client = _client(milvus_uri(uri))
    with _lock:
        if client.has_collection(name):
            client.drop_collection(name)


def drop_collections(collection: str, keep: str, uri: str = "") -> None:
    """Drop every Milvus generation of ``collection`` but ``keep``, and any pre-manifest one."""
    client = _client(milvus_uri(uri))
    with _lock:
        for name in client.list_collections():
            if name != keep and (name == collection or is_generation_of(name, collection)):
                client.drop_collection(name)


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
    client.load_collection(manifest.milvus_name)
    rows = int(client.get_collection_stats(manifest.milvus_name).get("row_count", -1))
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


def dense_rank(
    manifest: Manifest, query: str, k: int, uri: str = ""
) -> list[tuple[str, Passage, float]]:
    """The ``k`` best distinct documents by cosine similarity of their best passage."""
    client = _client(milvus_uri(uri))
    vector = default_embeddings().embed_query(query)
    fetch = passage_depth(k, manifest.passages)
    with _lock:
        _checked(client, manifest, milvus_uri(uri))
        hits = client.search(
            collection_name=manifest.milvus_name,
            data=[vector],
            limit=fetch,
            output_fields=["doc", "title", "text"],
        )[0]
    passages = [
        Passage(
            id=str(hit["id"]),
            doc=str(hit["entity"].get("doc", "")),
            title=str(hit["entity"].get("title", "")),
            text=str(hit["entity"].get("text", "")),
        )
        for hit in hits
    ]
    best = best_per_document(((p["doc"], i) for i, p in enumerate(passages)), k)
    return [(doc, passages[i], float(hits[i]["distance"])) for doc, i in best]


def dense_search(collection: str, query: str, k: int, uri: str = "") -> list[Evidence]:
    """Top-``k`` distinct documents by cosine similarity, each shown by its best passage."""
    return [
        Evidence(id=doc, title=p["title"], text=p["text"], source="milvus", score=score)
        for doc, p, score in dense_rank(live_manifest(collection), query, k, uri)
    ]
