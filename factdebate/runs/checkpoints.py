"""Checkpointers by name: ``sqlite:PATH`` (one machine) or ``postgresql://...`` (shared)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.secrets import redact

SQLITE_HEADER = b"SQLite format 3\x00"
POSTGRES_PREFIXES = ("postgresql://", "postgres://")
EXPECTED = "expected sqlite:PATH or postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
MAX_SPEC_CHARS = 2000
CONNECT_TIMEOUT_S = 10  # when the URL names none: a host that does not answer fails in time
SETUP_LOCK = 0x46444350  # advisory lock key: one process at a time creates the tables
SETUP_WAIT_S = 120.0


class CheckpointError(FactDebateError, ValueError):
    """A checkpoint database that cannot be used: bad spec, refused login, gone mid-run."""


class _LostConnectionNoise(logging.Filter):
    """Drop psycopg's warning that it could not end a pipeline on a lost connection.

    The loss itself is reported once, as a one-line ``CheckpointError``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored terminating")


def is_postgres(spec: str) -> bool:
    """Whether ``spec`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return spec.startswith(POSTGRES_PREFIXES)


def shown(spec: str) -> str:
    """``spec`` with its credentials redacted (for messages and logs): the one redaction."""
    return redact(spec)


def checkpoint_path(spec: str) -> Path:
    """The SQLite file named by ``sqlite:PATH``: new, empty, or an existing SQLite database.

    Raises:
        ValueError: another scheme, a folder, or a file that is not a SQLite database.
    """
    scheme, sep, path = spec.partition(":")
    if scheme != "sqlite" or not sep or not path.strip():
        raise CheckpointError(f"bad checkpoint {shown(spec)!r}: {EXPECTED}")
    target = Path(path).expanduser()
    if target.is_dir():
        raise CheckpointError(f"bad checkpoint {spec!r}: {target} is a folder, not a SQLite file")
    if target.exists():
        try:
            with target.open("rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise CheckpointError(f"bad checkpoint {spec!r}: {exc.strerror or exc}") from exc
        if head and head != SQLITE_HEADER:
            raise CheckpointError(f"bad checkpoint {spec!r}: {target} is not a SQLite database")
    return target


def postgres_conninfo(spec: str) -> str:
    """The libpq connection string of a ``postgresql://`` spec, with a connect timeout.

    Raises:
        CheckpointError: a URL libpq cannot parse, one without a host, or psycopg missing.
    """
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise CheckpointError(
            "PostgreSQL checkpoints need langgraph-checkpoint-postgres and psycopg"
        ) from exc
    try:
        params = conninfo_to_dict(spec)
    except Exception as exc:  # psycopg.ProgrammingError: a malformed URL
        raise CheckpointError(f"bad checkpoint {shown(spec)!r}: {_one_line(exc)}") from exc
    if not params.get("host") and not params.get("hostaddr"):
        raise CheckpointError(f"bad checkpoint {shown(spec)!r}: the URL names no host")
    if "@" in str(params.get("host")):  # libpq ends the password at its first "@"
        raise CheckpointError(
            f"bad checkpoint {shown(spec)!r}: write '@' inside a user name or password as %40 "
            "(PostgreSQL reads the password up to the first '@')"
        )
    if "connect_timeout" in params:
        return spec
    return make_conninfo(spec, connect_timeout=CONNECT_TIMEOUT_S)


def check_checkpoint(spec: str) -> None:
    """Refuse a bad checkpoint spec before anything runs (no connection is made).

    Raises:
        ValueError: an unknown scheme, an over-long spec, or what ``checkpoint_path`` or
            ``postgres_conninfo`` refuse.
    """
    if not isinstance(spec, str) or len(spec) > MAX_SPEC_CHARS:
        raise CheckpointError(f"bad checkpoint: give a spec of at most {MAX_SPEC_CHARS} characters")
    if is_postgres(spec):
        postgres_conninfo(spec)
    else:
        checkpoint_path(spec)


def open_checkpointer(spec: str, *, existing: bool = False) -> AbstractAsyncContextManager[Any]:
    """An async context manager yielding the async checkpointer (a saver) named by ``spec``.

    ``sqlite:PATH`` makes the file's folder; ``postgresql://`` connects and creates the
    checkpoint tables when they are missing (one process at a time). ``existing``: the
    caller reads stored threads (review, history, replay), so a SQLite file that is not there
    is refused instead of created empty.

    Raises:
        CheckpointError: a spec ``check_checkpoint`` refuses (at once); on entry, a database
            that refuses the login or cannot be reached; within the block, a database that
            fails or goes away (a damaged SQLite file, a lost PostgreSQL connection).
    """
    check_checkpoint(spec)
    if is_postgres(spec):
        return _postgres(spec)
    if existing and not checkpoint_path(spec).is_file():
        raise CheckpointError(
            f"no checkpoint database at {checkpoint_path(spec)}: nothing is stored there"
        )
    return _sqlite(spec)


_WAL_LOCK = threading.Lock()
SQLITE_BUSY_S = 30.0
"""How long a connection waits for another one's write before it gives up, seconds."""


def _write_ahead_log(target: Path) -> None:
    """Put the file in WAL mode before any saver opens it, one connection at a time.

    The saver switches the mode itself when it sets up, and that switch fails at once with
    "database is locked" while a second item's saver has the file open (two items of one
    bench starting together); once the file is in WAL mode the saver's switch is a no-op.
    """
    import sqlite3

    with _WAL_LOCK:
        conn = sqlite3.connect(str(target), timeout=SQLITE_BUSY_S)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()


@asynccontextmanager
async def _sqlite(spec: str) -> AsyncIterator[Any]:
    import sqlite3

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    target = checkpoint_path(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        await asyncio.to_thread(_write_ahead_log, target)
        async with AsyncSqliteSaver.from_conn_string(str(target)) as saver:
            yield saver
    except sqlite3.DatabaseError as exc:  # a damaged or foreign file, read during the run
        raise CheckpointError(f"checkpoint {spec}: {exc}") from exc


@asynccontextmanager
async def _postgres(spec: str) -> AsyncIterator[Any]:
    import psycopg

    psycopg_log = logging.getLogger("psycopg")
    if not any(isinstance(f, _LostConnectionNoise) for f in psycopg_log.filters):
        psycopg_log.addFilter(_LostConnectionNoise())
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row

    try:
        conn = await psycopg.AsyncConnection.connect(
            postgres_conninfo(spec), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    except psycopg.Error as exc:
        raise CheckpointError(f"checkpoint {shown(spec)}: {_one_line(exc)}") from exc
    try:
        async with conn:
            saver = AsyncPostgresSaver(conn)
            try:
                await _lock_setup(conn, spec)
                try:
                    await saver.setup()
                finally:
                    await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
            except psycopg.Error as exc:
                raise CheckpointError(f"checkpoint {shown(spec)}: {_one_line(exc)}") from exc
            yield saver
    except psycopg.Error as exc:  # the database went away (or failed) during the run
        raise CheckpointError(
            f"checkpoint {shown(spec)}: {_one_line(exc)} "
            "(finished steps are saved: run the same command again to resume)"
        ) from exc


async def _lock_setup(conn: Any, spec: str) -> None:
    """Take the table-creation lock by polling, never by waiting inside the database.

    A session blocked in ``pg_advisory_lock`` holds a transaction open, and the holder's
    ``CREATE INDEX CONCURRENTLY`` waits for every open transaction to end: two processes
    starting at once on a fresh database deadlocked that way.
    """
    deadline = time.monotonic() + SETUP_WAIT_S
    while True:
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (SETUP_LOCK,))
        row = await cursor.fetchone()
        if row and row["ok"]:
            return
        if time.monotonic() > deadline:
            raise CheckpointError(
                f"checkpoint {shown(spec)}: another process has been creating the checkpoint "
                f"tables for over {SETUP_WAIT_S:.0f} s"
            )
        await asyncio.sleep(0.1)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _is_postgres_saver(saver: Any) -> bool:
    """Whether ``saver`` keeps its checkpoints in PostgreSQL (else SQLite)."""
    return type(saver).__module__.startswith("langgraph.checkpoint.postgres")


class ThreadBusyError(CheckpointError):
    """Another process (or task) is running the same stored thread right now."""


def _lease_key(thread: str) -> int:
    """A signed 64-bit advisory-lock key for ``thread`` (PostgreSQL's bigint)."""
    import hashlib

    digest = hashlib.sha256(f"factdebate-thread:{thread}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@asynccontextmanager
async def thread_lease(saver: Any, spec: str, thread: str) -> AsyncIterator[None]:
    """Hold the run lease of ``thread`` for the block: one runner of a stored thread at a time.

    Runs of a stored thread and review decisions on it (``factdebate.review.resume``) both
    hold it. PostgreSQL: a session advisory lock on the saver's connection; SQLite: an
    exclusive ``flock`` on a lock file beside the database. The lease lives exactly as long as
    its holder: it is given back when the block ends (a failure included), and by the
    database or the OS when the holder's process dies, so a killed runner or reviewer never
    leaves the thread locked or undecidable.

    Raises:
        ThreadBusyError: another runner holds the lease (nothing was run).
    """
    busy = ThreadBusyError(
        f"thread {thread!r} is being run by another process right now: wait for it to finish, "
        "then run the same command again"
    )
    if _is_postgres_saver(saver):
        key = _lease_key(thread)
        async with saver.lock:
            cursor = await saver.conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,))
            row = await cursor.fetchone()
        if not (row and row["ok"]):
            raise busy
        try:
            yield
        finally:
            with contextlib.suppress(Exception):  # a lost connection has released it already
                async with saver.lock:
                    await saver.conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        return
    import fcntl
    import hashlib
    import os

    folder = checkpoint_path(spec).with_name(checkpoint_path(spec).name + ".leases")
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(thread.encode()).hexdigest()[:32] + ".lock"
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


async def recorded_metadata(saver: Any, thread: str, key: str, limit: int = 50) -> Any:
    """The newest value of metadata ``key`` among ``thread``'s checkpoints, or None."""
    items = saver.alist({"configurable": {"thread_id": thread}}, limit=limit)
    try:
        async for item in items:
            value = (item.metadata or {}).get(key)
            if value is not None:
                return value
    finally:
        await items.aclose()  # closed before the saver's connection, even on an early return
    return None
