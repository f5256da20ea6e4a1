"""Web search answers kept under the data home for a while: a repeated search is not paid twice."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.evidence_hook import normalise_query
from factdebate.tools.core.home import home_dir
from factdebate.tools.core.json_text import parse_json
from factdebate.tools.core.records import Evidence
from factdebate.tools.core.secrets import redact

log = logging.getLogger(__name__)

CACHE_FILE = "search-cache.sqlite"
"""The cache's file under the data home (SQLite, write-ahead log: several processes share it)."""
SCHEMA = 1
"""Part of every key: entries written under another layout are never read back."""
BUSY_S = 10.0
"""How long one process waits for another's write before it searches live instead, seconds."""
CACHED_BACKENDS = frozenset({"tavily", "serper", "openalex"})
"""Backends whose answers cost money or rate limit; the offline BM25 stand-in is never cached."""
CacheStatus = Literal["hit", "miss", "off", "damaged"]
MAX_ENTRY_CHARS = 64 * 1024**2
"""A stored answer longer than this is damaged, not read (answers are a few kilobytes)."""

_TABLE = """
CREATE TABLE IF NOT EXISTS searches (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    query TEXT NOT NULL,
    k INTEGER NOT NULL,
    stored_at REAL NOT NULL,
    used_at REAL NOT NULL,
    size INTEGER NOT NULL,
    docs TEXT NOT NULL
)
"""
_INDEX = "CREATE INDEX IF NOT EXISTS searches_used ON searches (used_at)"
_warned: set[str] = set()
_warn_lock = threading.Lock()


def now() -> float:
    """The cache's clock, seconds since the epoch (tests move it instead of sleeping)."""
    return time.time()


def search_key(backend: str, query: str, k: int, options: Mapping[str, Any]) -> str:
    """The cache key of one search: backend, normalised query, k and the backend's options."""
    material = json.dumps(
        [SCHEMA, backend, normalise_query(query), int(k), dict(options)],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


@dataclass
class CacheTally:
    """What a run's searches did with the cache: answers served from it, and live calls made."""

    hits: int = 0
    misses: int = 0
    live: int = 0
    damaged: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, status: CacheStatus) -> None:
        """Count one search: a hit (no call made), a miss (a call made and stored) or off.

        ``damaged`` counts a stored entry that could not be read (the search then goes live
        and is counted as a miss too).
        """
        with self._lock:
            if status == "damaged":
                self.damaged += 1
            elif status == "hit":
                self.hits += 1
            else:
                self.live += 1
                if status == "miss":
                    self.misses += 1

    def summary(self) -> dict[str, int]:
        """``{"hits", "misses", "live_calls", "calls_saved"}``, and ``damaged`` when any was."""
        with self._lock:
            found = {
                "hits": self.hits,
                "misses": self.misses,
                "live_calls": self.live,
                "calls_saved": self.hits,
            }
            if self.damaged:
                found["damaged"] = self.damaged
            return found


def describe(summary: Mapping[str, int]) -> str:
    """One line of a tally's summary: live calls made, and the paid calls the cache saved."""
    damaged = summary.get("damaged", 0)
    ignored = f"; {damaged} damaged cache entries ignored (searched live)" if damaged else ""
    return (
        f"web searches: {summary.get('live_calls', 0)} live calls, {summary.get('hits', 0)} "
        f"answered from the search cache ({summary.get('calls_saved', 0)} paid calls saved)"
        f"{ignored}"
    )


_tally: contextvars.ContextVar[CacheTally | None] = contextvars.ContextVar(
    "factdebate_search_tally", default=None
)


@contextlib.contextmanager
def tallying() -> Iterator[CacheTally]:
    """Count the web searches made inside the block (its tasks and tool threads included)."""
    tally = CacheTally()
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


def _note(status: CacheStatus) -> None:
    tally = _tally.get()
    if tally is not None:
        tally.count(status)


def _warn_once(path: Path, exc: BaseException) -> None:
    """Log a cache fault once per file and kind: the search goes on live."""
    text = redact(f"{type(exc).__name__}: {exc}")
    with _warn_lock:
        if f"{path}\n{text}" in _warned:
            return
        _warned.add(f"{path}\n{text}")
    log.warning("search cache %s unusable, searching live: %s", path, text)


def _docs(raw: object) -> list[Evidence] | None:
    """The stored documents, or None when the entry is not a list of evidence records."""
    if not isinstance(raw, str) or len(raw) > MAX_ENTRY_CHARS:
        return None
    try:
        data = parse_json(raw)  # nested too deeply is one more damaged entry
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    found: list[Evidence] = []
    for doc in data:
        if not isinstance(doc, dict):
            return None
        try:
            fields = [doc["id"], doc["title"], doc["text"], doc["source"]]
            score = doc["score"]
            if not all(isinstance(f, str) for f in fields) or isinstance(score, bool):
                return None
            found.append(
                Evidence(
                    id=fields[0],
                    title=fields[1],
                    text=fields[2],
                    source=fields[3],
                    score=float(score),
                )
            )
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
    return found


def _fresh(stored_at: object, at: float, ttl_s: float) -> bool:
    """Whether an entry stored at ``stored_at`` still answers (a damaged time: it does not)."""
    if not isinstance(stored_at, int | float) or isinstance(stored_at, bool):
        return False
    return 0 <= at - stored_at < ttl_s


class DamagedEntry(FactDebateError):
    """A stored entry that cannot be read: ignored, counted, and the search goes live."""


class SearchCache:
    """Search answers in one SQLite file: time to live on read, least recently used out by size.

    Every operation opens its own connection (search calls run in short-lived threads), in
    WAL mode with a busy timeout, inside one transaction: an entry is written whole or not
    at all, and two processes sharing the file wait for each other rather than fail.
    """

    def __init__(self, path: Path, ttl_s: float, max_bytes: int) -> None:
        """Open (create on first write) the cache at ``path``.

        Args:
            path: The SQLite file.
            ttl_s: Seconds an entry answers searches after it was stored (> 0).
            max_bytes: Most bytes of stored documents kept; the least recently used go first.
        """
        self.path, self.ttl_s, self.max_bytes = Path(path), float(ttl_s), int(max_bytes)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), timeout=BUSY_S, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_TABLE)
            conn.execute(_INDEX)
            yield conn
        finally:
            conn.close()

    def get(self, key: str) -> list[Evidence] | None:
        """The documents stored under ``key`` within the time to live, or None.

        Raises:
            DamagedEntry: an entry is there but cannot be read (it is left for the live
                answer to replace).
        """
        at = now()
        damaged = False
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT stored_at, docs FROM searches WHERE key = ?", (key,)
                ).fetchone()
                docs = None if row is None else _docs(row[1])
                damaged = row is not None and docs is None
                if row is not None and docs is not None and not _fresh(row[0], at, self.ttl_s):
                    conn.execute("DELETE FROM searches WHERE key = ?", (key,))
                    docs = None
                elif docs is not None:
                    conn.execute("UPDATE searches SET used_at = ? WHERE key = ?", (at, key))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if damaged:
            raise DamagedEntry(f"the entry {key[:12]} is damaged")
        return docs

    def put(self, key: str, backend: str, query: str, k: int, docs: list[Evidence]) -> None:
        """Store ``docs`` under ``key``, then drop least recently used entries over the bound."""
        payload = json.dumps(docs, ensure_ascii=False)
        size = len(payload.encode("utf-8"))
        if size > self.max_bytes:
            return  # one answer larger than the whole cache is not kept
        at = now()
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT OR REPLACE INTO searches VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, backend, normalise_query(query), k, at, at, size, payload),
                )
                total = int(
                    conn.execute("SELECT COALESCE(SUM(size), 0) FROM searches").fetchone()[0]
                )
                if total > self.max_bytes:
                    self._evict(conn, total - self.max_bytes)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @staticmethod
    def _evict(conn: sqlite3.Connection, excess: int) -> None:
        """Delete least recently used entries until ``excess`` bytes are gone."""
        doomed: list[str] = []
        freed = 0
        for key, size in conn.execute("SELECT key, size FROM searches ORDER BY used_at, key"):
            if freed >= excess:
                break
            doomed.append(key)
            freed += int(size)
        conn.executemany("DELETE FROM searches WHERE key = ?", [(key,) for key in doomed])

    def stats(self) -> dict[str, int]:
        """``{"entries", "bytes"}`` now stored (both 0 before the file exists)."""
        if not self.path.is_file():
            return {"entries": 0, "bytes": 0}
        with self._connect() as conn:
            entries, size = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM searches"
            ).fetchone()
        return {"entries": int(entries), "bytes": int(size)}


def cache_path() -> Path:
    """Where the search cache lives: ``search-cache.sqlite`` under the data home."""
    return home_dir() / CACHE_FILE


def cached_search(
    backend: Any,
    query: str,
    k: int,
    *,
    ttl_s: float,
    max_mb: float,
    options: Mapping[str, Any] | None = None,
) -> tuple[list[Evidence], CacheStatus]:
    """``backend.search(query, k)``, answered from the cache when a fresh entry is there.

    Only paid web backends (``CACHED_BACKENDS``) that name their options (``cache_options()``,
    not None) are cached, and only with ``ttl_s > 0``. A
    cache that cannot be read or written (a damaged file, a full disk, a lock held too long)
    is logged once and the search goes live: the cache saves money, it never stops a run.
    Failed searches are not stored. Every web search is counted in the block's ``tallying()``
    (the offline stand-in is not).

    Returns:
        The documents, and ``hit`` (no call made), ``miss`` (called and stored) or ``off``.
    """
    name = str(getattr(backend, "name", ""))
    own = getattr(backend, "cache_options", lambda: None)()
    if ttl_s <= 0 or name not in CACHED_BACKENDS or own is None:
        docs = backend.search(query, k)
        if name in CACHED_BACKENDS:  # the offline stand-in is neither paid nor a web search
            _note("off")
        return docs, "off"
    opts = {**(options or {}), **own}
    cache = SearchCache(cache_path(), ttl_s, int(max_mb * 1024 * 1024))
    key = search_key(name, query, k, opts)
    try:
        found = cache.get(key)
    except DamagedEntry as exc:
        _warn_once(cache.path, exc)
        _note("damaged")
        found = None
    except (sqlite3.Error, OSError) as exc:
        _warn_once(cache.path, exc)
        found = None
    if found is not None:
        _note("hit")
        return found, "hit"
    docs = backend.search(query, k)
    try:
        cache.put(key, name, query, k, docs)
    except (sqlite3.Error, OSError) as exc:
        _warn_once(cache.path, exc)
    _note("miss")
    return docs, "miss"
