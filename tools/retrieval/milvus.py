"""One Milvus client per URI (Lite file or server): opening it, the lock, collection upkeep."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.home import data_home
from factdebate.tools.retrieval.embeddings import EMBEDDING_DIM
from factdebate.tools.retrieval.full_text import TERMS, add_full_text, passage_terms
from factdebate.tools.retrieval.manifest import (
    IndexUnavailableError,
    is_generation_of,
    is_server,
)
from factdebate.tools.retrieval.ranking import Passage

milvus_lock = threading.Lock()
"""Milvus clients are shared by threads; every call goes through this process-wide lock."""
_MAX_TEXT = 8192
HNSW = {"M": 16, "efConstruction": 200}  # the server's dense index (Milvus's usual settings)
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
        raise SettingsError(f"{WAIT_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 <= value <= 600:
        raise SettingsError(f"{WAIT_ENV} must be 0..600 seconds, got {raw!r}")
    return value


def _open(uri: str) -> Any:
    from pymilvus import MilvusClient

    for name in ("milvus_lite", "pymilvus"):  # we report failures ourselves, in one line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    token = os.environ.get(TOKEN_ENV, "")
    if token and is_server(uri):
        return MilvusClient(uri, token=token)
    return MilvusClient(uri)


@cache
def milvus_client(uri: str) -> Any:
    """The shared client of ``uri``; a Milvus Lite file held by another process is waited for.

    Raises:
        IndexUnavailableError: the file or server cannot be opened (in time).
    """
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


def server_version(uri: str = "") -> str:
    """The version the Milvus at ``uri`` reports (``milvus_lite-3.2.2`` for Milvus Lite)."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        return str(client.get_server_version())


@contextlib.contextmanager
def locked_client(uri: str = "") -> Iterator[Any]:
    """The shared Milvus client of ``uri``, used under the process-wide Milvus lock."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        yield client


def create_collection(
    name: str, uri: str = "", dim: int = EMBEDDING_DIM, *, full_text: bool = False
) -> str:
    """Create the empty Milvus collection ``name`` (cosine metric); returns its index type.

    A server gets an HNSW index (approximate, for millions of vectors); Milvus Lite keeps
    its AUTOINDEX. Rows carry ``id`` (the passage's position), ``vector``, and ``doc``,
    ``title``, ``text`` as dynamic fields; ``full_text`` adds the analysed ``terms`` and their
    BM25 function (``full_text.add_full_text``).
    """
    from pymilvus import DataType, MilvusClient

    client = milvus_client(milvus_uri(uri))
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=True)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    index = MilvusClient.prepare_index_params()
    kind = "HNSW" if is_server(uri) else "AUTOINDEX"
    index.add_index(
        "vector", index_type=kind, metric_type="COSINE", params=HNSW if kind == "HNSW" else {}
    )
    if full_text:
        add_full_text(schema, index)
    with milvus_lock:
        if client.has_collection(name):
            client.drop_collection(name)
        client.create_collection(
            collection_name=name, schema=schema, index_params=index, consistency_level="Strong"
        )
    return kind


def insert_rows(
    name: str,
    first: int,
    passages: Sequence[Passage],
    vectors: Sequence[Any],
    uri: str = "",
    *,
    full_text: bool = False,
) -> None:
    """Insert passages with their vectors; row ids are ``first``, ``first + 1``, ...

    ``full_text``: the collection has the BM25 function; each row gets its analysed terms.
    """
    rows: list[dict[str, Any]] = [
        {
            "id": first + offset,
            "vector": vector,
            "doc": passage["doc"],
            "title": passage["title"],
            "text": passage["text"][:_MAX_TEXT],
        }
        for offset, (passage, vector) in enumerate(zip(passages, vectors, strict=True))
    ]
    if full_text:
        for row, terms in zip(rows, passage_terms(passages), strict=True):
            row[TERMS] = terms
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        client.insert(collection_name=name, data=rows)


def flush(name: str, uri: str = "") -> None:
    """Make inserted rows durable and searchable (Milvus Lite searches slowly without it)."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        client.flush(collection_name=name)


def count_rows(name: str, uri: str = "", below: int | None = None) -> int:
    """Rows in ``name`` (deleted ones not counted); ``below``: only ids under it."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
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
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        client.delete(collection_name=name, filter=f"id >= {int(first)}")


def wait_indexed(name: str, uri: str = "", timeout: float = 3600.0) -> None:
    """Wait until the server reports every row of ``name`` in its dense index."""
    client = milvus_client(milvus_uri(uri))
    deadline = time.monotonic() + timeout
    while True:
        with milvus_lock:
            info = client.describe_index(collection_name=name, index_name="vector")
        pending = int(info.get("pending_index_rows", 0) or 0)
        if pending == 0 and int(info.get("indexed_rows", 0)) >= int(info.get("total_rows", 0)):
            return
        if time.monotonic() > deadline:
            raise IndexUnavailableError(f"the dense index of {name} is still building")
        time.sleep(0.5)


def drop_collection(name: str, uri: str = "") -> None:
    """Drop the Milvus collection ``name`` if it exists (a failed build's leftovers)."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        if client.has_collection(name):
            client.drop_collection(name)


def drop_collections(collection: str, keep: str, uri: str = "") -> None:
    """Drop every Milvus generation of ``collection`` but ``keep``, and any pre-manifest one."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        for name in client.list_collections():
            if name != keep and (name == collection or is_generation_of(name, collection)):
                client.drop_collection(name)
