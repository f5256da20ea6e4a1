"""One Milvus client per URI (Lite file or server): opening it, the lock, collection upkeep."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from factdebate.tools.core.env import env_float
from factdebate.tools.core.home import data_home
from factdebate.tools.core.secrets import redact
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
    return env_float(WAIT_ENV, 10.0, 0.0, 600.0)


class _Failures(logging.Handler):
    """Keeps the exception Milvus Lite logs when it cannot start (pymilvus hides it)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.seen.append(record.exc_info[1])


LITE_GRPC = {"grpc.keepalive_time_ms": 600_000, "grpc.keepalive_permit_without_calls": False}
"""gRPC options for Milvus Lite's local server. pymilvus pings every 10 s, calls or none;
Lite's server allows fewer pings, answers ``GOAWAY too_many_pings`` and gRPC logs it as an
error line on stderr (in a script using the API, in a server's log). A local socket needs no
keepalive: no ping on an idle connection, one every 10 minutes during a call."""


def _open(uri: str, failures: _Failures | None = None) -> Any:
    from pymilvus import MilvusClient

    for name in ("milvus_lite", "pymilvus"):  # we report failures ourselves, in one line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    token = os.environ.get(TOKEN_ENV, "")
    if token and is_server(uri):
        return MilvusClient(uri, token=token)
    if failures is None:
        return MilvusClient(uri, grpc_options=LITE_GRPC)
    starter = logging.getLogger("milvus_lite.server_manager")  # logs why Lite did not start
    level, propagate = starter.level, starter.propagate
    starter.setLevel(logging.ERROR)
    starter.propagate = False
    starter.addHandler(failures)
    try:
        return MilvusClient(uri, grpc_options=LITE_GRPC)
    finally:
        starter.removeHandler(failures)
        starter.setLevel(level)
        starter.propagate = propagate


LITE_MARKS = ("LOCK", "collections", "databases")
"""What a Milvus Lite database folder holds (any one marks a folder as one)."""
MIN_FREE_BYTES = 1024**2
"""Less free space than this where a Lite database lives counts as a full disk."""
_CAUSES = {
    errno.EROFS: "its file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.ENOTDIR: "a parent of it is a file, not a folder",
}


def _os_cause(exc: OSError) -> str:
    return _CAUSES.get(exc.errno or 0, exc.strerror or type(exc).__name__)


def lite_problem(path: str) -> str | None:
    """Why a Milvus Lite database cannot live at ``path``, checked without waiting; or None.

    Milvus Lite keeps a database as a folder: a file there (junk bytes, an older release's
    file), a folder of something else (which it would fill with its own files), a folder it
    cannot create or write (a read-only or foreign home) and a full disk are each named at
    once; only a folder another process holds is worth waiting for.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        return "it is a file, not a Milvus Lite database (Milvus Lite keeps a folder)"
    if target.is_dir():
        try:
            names = {entry.name for entry in target.iterdir()}
        except OSError as exc:
            return f"cannot read the folder ({_os_cause(exc)})"
        if names and not names & set(LITE_MARKS):
            return "the folder holds other files, not a Milvus Lite database"
    existing = next((p for p in (target, *target.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        return "a parent of it is a file, not a folder"
    if existing not in (target, target.parent):  # Milvus Lite makes the last folder only
        return f"its folder {target.parent} does not exist"
    if not os.access(existing, os.W_OK | os.X_OK):
        try:  # os.access names no cause: ask the file system itself
            readonly = bool(os.statvfs(existing).f_flag & os.ST_RDONLY)
        except OSError:
            readonly = False
        return "its file system is read-only" if readonly else f"cannot write to {existing}"
    try:
        free = shutil.disk_usage(existing).free
    except OSError:
        return None
    if free < MIN_FREE_BYTES:
        return f"the disk is full ({free} bytes free at {existing})"
    return None


def _lite_busy(path: str) -> bool:
    """Whether another process holds the Lite database at ``path`` (its ``LOCK`` file)."""
    import fcntl

    try:
        fd = os.open(Path(path) / "LOCK", os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def _unavailable(uri: str, hint: str) -> IndexUnavailableError:
    return IndexUnavailableError(f"cannot open the Milvus index at {redact(uri)}: {hint}")


BUSY_HINT = (
    "another process may be using this Milvus Lite file (one process at a time: a served "
    "langgraph dev and a CLI run cannot share it); stop it, wait, give each its own "
    "FACTDEBATE_HOME, or share a Milvus server (--set milvus_uri=http://HOST:PORT)"
)


@cache
def milvus_client(uri: str) -> Any:
    """The shared client of ``uri``; a Milvus Lite file held by another process is waited for.

    Any other reason a Lite database cannot open (``lite_problem``, or the error Milvus Lite
    raised) is said at once, in one line.

    Raises:
        IndexUnavailableError: the file or server cannot be opened (in time).
    """
    lite = "://" not in uri
    if lite:
        problem = lite_problem(uri)
        if problem is not None:
            raise _unavailable(uri, f"{problem}; move it away or set FACTDEBATE_HOME")
    deadline = time.monotonic() + wait_seconds()
    told = False
    while True:
        failures = _Failures() if lite else None
        try:
            return _open(uri, failures)
        except Exception as exc:  # pymilvus wraps lock and connection failures alike
            if not lite:
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise _unavailable(uri, f"{type(exc).__name__}: {first}") from exc
            seen = failures.seen if failures is not None else []
            held = any(type(e).__name__ == "DataDirLockedError" for e in seen)
            if not held and not _lite_busy(uri):  # not a held lock: waiting mends nothing
                raise _unavailable(uri, _lite_cause(next(iter(seen), exc))) from exc
            if time.monotonic() >= deadline:
                raise _unavailable(uri, BUSY_HINT) from exc
            if not told:
                log.warning(
                    "the Milvus Lite file %s is busy (another process?); waiting up to %.0f s (%s)",
                    uri,
                    wait_seconds(),
                    WAIT_ENV,
                )
                told = True
            time.sleep(0.5)


def _lite_cause(exc: BaseException) -> str:
    """One line saying why Milvus Lite did not open, from the error it raised."""
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"Milvus Lite cannot use it: {_os_cause(exc)}{where}"
    first = (str(exc).splitlines() or [""])[0][:300]
    return f"Milvus Lite cannot open it ({type(exc).__name__}: {first})"


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
