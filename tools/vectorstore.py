"""Dense retrieval over Milvus (embedded Milvus Lite by default, any server by URI)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

from tools.corpus import data_home
from tools.embeddings import EMBEDDING_DIM, encoder_for, spec_of
from tools.manifest import (
    IndexMismatchError,
    IndexMissingError,
    IndexUnavailableError,
    Manifest,
    is_generation_of,
    is_server,
    live_manifest,
)
from tools.ranking import Passage, best_per_document
from tools.records import Evidence

__all__ = [
    "IndexMissingError",
    "IndexUnavailableError",
    "collection_exists",
    "count_rows",
    "create_collection",
    "dense_hits",
    "dense_rank",
    "dense_search",
    "drop_collection",
    "drop_collections",
    "flush",
    "insert_rows",
    "locked_client",
    "milvus_uri",
    "passage_depth",
    "read_shared_manifest",
    "wait_indexed",
    "write_shared_manifest",
]

_lock = threading.Lock()
_verified: set[tuple[str, str]] = set()
_MAX_TEXT = 8192
MAX_FETCH = 16_384  # Milvus's own cap on one search's result count
MANIFESTS = "factdebate_manifests"  # the Milvus collection holding manifests on a server
HNSW = {"M": 16, "efConstruction": 200}  # the server's dense index (Milvus's usual settings)
READ_CONSISTENCY = "Bounded"
"""Searches of a finished (never written again) generation need not wait for the newest
timestamp: on a server, Strong consistency added about 200 ms to every search."""
MIN_EF = 64  # HNSW search breadth floor (it is raised to the number of hits asked for)
WAIT_ENV = "FACTDEBATE_INDEX_WAIT_S"
TOKEN_ENV = "FACTDEBATE_MILVUS_TOKEN"
"""An authenticated server's token (``user:password`` or an API key); redacted from output."""
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
    token = os.environ.get(TOKEN_ENV, "")
    if token and is_server(uri):
        return MilvusClient(uri, token=token)
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
        manifest = live_manifest(collection, uri)
    except (IndexMissingError, IndexMismatchError):
        return False
    with _lock:
        return bool(client.has_collection(manifest.milvus_name))


def create_collection(name: str, uri: str = "", dim: int = EMBEDDING_DIM) -> str:
    """Create the empty Milvus collection ``name`` (cosine metric); returns its index type.

    A server gets an HNSW index (approximate, for millions of vectors); Milvus Lite keeps
    its AUTOINDEX. Rows carry ``id`` (the passage's position), ``vector``, and ``doc``,
    ``title``, ``text`` as dynamic fields.
    """
    from pymilvus import DataType, MilvusClient

    client = _client(milvus_uri(uri))
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=True)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    index = MilvusClient.prepare_index_params()
    kind = "HNSW" if is_server(uri) else "AUTOINDEX"
    index.add_index(
        "vector", index_type=kind, metric_type="COSINE", params=HNSW if kind == "HNSW" else {}
    )
    with _lock:
        if client.has_collection(name):
            client.drop_collection(name)
        client.create_collection(
            collection_name=name, schema=schema, index_params=index, consistency_level="Strong"
        )
    return kind


def insert_rows(
    name: str, first: int, passages: Sequence[Passage], vectors: Sequence[Any], uri: str = ""
) -> None:
    """Insert passages with their vectors; row ids are ``first``, ``first + 1``, ..."""
    rows = [
        {
            "id": first + offset,
            "vector": vector,
            "doc": passage["doc"],
            "title": passage["title"],
            "text": passage["text"][:_MAX_TEXT],
        }
        for offset, (passage, vector) in enumerate(zip(passages, vectors, strict=True))
    ]
    client = _client(milvus_uri(uri))
    with _lock:
        client.insert(collection_name=name, data=rows)


def flush(name: str, uri: str = "") -> None:
    """Make inserted rows durable and searchable (Milvus Lite searches slowly without it)."""
    client = _client(milvus_uri(uri))
    with _lock:
        client.flush(collection_name=name)


def count_rows(name: str, uri: str = "", below: int | None = None) -> int:
    """Rows in ``name`` (deleted ones not counted); ``below``: only ids under it."""
    client = _client(milvus_uri(uri))
    with _lock:
        client.load_collection(name)
        rows = client.query(
            collection_name=name,
            filter="" if below is None else f"id < {int(below)}",
            output_fields=["count(*)"],
            consistency_level="Strong",
        )
    return int(rows[0]["count(*)"])


def delete_from(name: str, first: int, uri: str = "") -> None:
    """Delete every row whose id is ``first`` or more (a killed build's unfinished batch)."""
    client = _client(milvus_uri(uri))
    with _lock:
        client.delete(collection_name=name, filter=f"id >= {int(first)}")


def wait_indexed(name: str, uri: str = "", timeout: float = 3600.0) -> None:
    """Wait until the server reports every row of ``name`` in its dense index."""
    client = _client(milvus_uri(uri))
    deadline = time.monotonic() + timeout
    while True:
        with _lock:
            info = client.describe_index(collection_name=name, index_name="vector")
        pending = int(info.get("pending_index_rows", 0) or 0)
        if pending == 0 and int(info.get("indexed_rows", 0)) >= int(info.get("total_rows", 0)):
            return
        if time.monotonic() > deadline:
            raise IndexUnavailableError(f"the dense index of {name} is still building")
        time.sleep(0.5)


def _manifests(client: Any) -> None:
    """Create the server's manifest collection on first use (a key, the JSON, a dummy vector)."""
    from pymilvus import DataType, MilvusClient

    if client.has_collection(MANIFESTS):
        return
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("name", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("manifest", DataType.VARCHAR, max_length=65_535)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)  # Milvus 2.3 needs one
    index = MilvusClient.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="L2")
    client.create_collection(collection_name=MANIFESTS, schema=schema, index_params=index)


def read_shared_manifest(collection: str, uri: str) -> str | None:
    """The manifest JSON of ``collection`` stored in the Milvus server, or None."""
    client = _client(milvus_uri(uri))
    with _lock:
        if not client.has_collection(MANIFESTS):
            return None
        client.load_collection(MANIFESTS)
        rows = client.get(collection_name=MANIFESTS, ids=[collection], output_fields=["manifest"])
    return str(rows[0]["manifest"]) if rows else None


def write_shared_manifest(collection: str, text: str, uri: str) -> None:
    """Store (replace) the manifest JSON of ``collection`` in the Milvus server."""
    client = _client(milvus_uri(uri))
    with _lock:
        _manifests(client)
        client.upsert(
            collection_name=MANIFESTS,
            data=[{"name": collection, "manifest": text, "vector": [0.0, 0.0]}],
        )
        client.flush(collection_name=MANIFESTS)


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


def dense_hits(
    manifest: Manifest, query: str, k: int, uri: str = ""
) -> list[tuple[str, str, float]]:
    """The ``k`` best distinct documents as ``(document, best passage id, cosine)``, no texts."""
    client = _client(milvus_uri(uri))
    vector = encoder_for(spec_of(manifest)).embed_query(query)  # the index's own encoder
    fetch = passage_depth(k, manifest.passages)
    with _lock:
        _checked(client, manifest, milvus_uri(uri))
        hits = client.search(
            collection_name=manifest.milvus_name,
            data=[vector],
            limit=fetch,
            output_fields=["doc"],  # texts only for the passages shown (passages_by_id)
            search_params=search_params(manifest, fetch),
            consistency_level=READ_CONSISTENCY,
        )[0]
    best = best_per_document(((str(h["entity"].get("doc", "")), i) for i, h in enumerate(hits)), k)
    return [(doc, str(hits[i]["id"]), float(hits[i]["distance"])) for doc, i in best]


def passages_by_id(manifest: Manifest, ids: Sequence[str], uri: str = "") -> dict[str, Passage]:
    """The stored passages with these ids (title and text read from Milvus)."""
    if not ids:
        return {}
    client = _client(milvus_uri(uri))
    with _lock:
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
    hits = dense_hits(manifest, query, k, uri)
    shown = passages_by_id(manifest, [passage for _, passage, _ in hits], uri)
    out = []
    for doc, passage, score in hits:
        row = shown.get(passage)
        title, text = (row["title"], row["text"]) if row else ("", "")
        out.append((doc, Passage(id=passage, doc=doc, title=title, text=text), score))
    return out


def dense_search(collection: str, query: str, k: int, uri: str = "") -> list[Evidence]:
    """Top-``k`` distinct documents by cosine similarity, each shown by its best passage."""
    return [
        Evidence(id=doc, title=p["title"], text=p["text"], source="milvus", score=score)
        for doc, p, score in dense_rank(live_manifest(collection, uri), query, k, uri)
    ]
