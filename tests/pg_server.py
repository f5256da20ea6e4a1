"""A throw-away PostgreSQL server for the `service` tests: Debian's binaries, a temp folder.

``initdb`` makes a cluster in a fresh temporary folder owned by the ``postgres`` user (CI runs
as root and PostgreSQL refuses to run as root), ``postgres`` listens on 127.0.0.1 at a free port
with password (SCRAM) authentication, and it is stopped by its PID. Everything that can keep it
from starting (no binaries, no unprivileged user, a failed initdb) raises ``PgUnavailable``
with the reason, which the fixtures turn into a printed skip.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bounded import COMMAND_GUARD_S, SERVICE_START_S, run_bounded
from tests.services import free_port, running

USER = "factdebate"  # the cluster's superuser (a database role, not an OS user)
OS_USER = "postgres"  # the unprivileged OS account that runs the server under root
SEARCH = ("/usr/lib/postgresql/*/bin",)


class PgUnavailable(RuntimeError):
    """PostgreSQL cannot run here; the message says why."""


def _bin_dir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    for pattern in SEARCH:
        hits = sorted(Path("/").glob(pattern.lstrip("/")), reverse=True)
        if hits:
            return hits[0]
    raise PgUnavailable("PostgreSQL is not installed (apt-get install postgresql)")


class PgServer:
    """One cluster in a temp folder; ``start``/``stop``/``kill`` it, make databases in it."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.password = secrets.token_hex(12)
        self.port = free_port()
        self.run_as: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam(OS_USER)
            except KeyError as exc:
                raise PgUnavailable(f"running as root and there is no {OS_USER!r} user") from exc
            self.run_as = {"user": entry.pw_uid, "group": entry.pw_gid}
        self.root = Path(tempfile.mkdtemp(prefix="factdebate-pg-"))
        self.data = self.root / "data"
        if self.run_as:
            os.chown(self.root, self.run_as["user"], self.run_as["group"])
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.run_as:
            os.chown(pwfile, self.run_as["user"], self.run_as["group"])
        done = run_bounded(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                USER,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            what="initdb",
            guard_s=COMMAND_GUARD_S,
            **self.run_as,
        )
        pwfile.unlink()
        if done.returncode != 0:
            self.cleanup()
            raise PgUnavailable(f"initdb failed: {(done.stderr or done.stdout).strip()[-300:]}")
        self.proc: subprocess.Popen[str] | None = None

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        """A connection URL for ``database`` (with the right password unless one is given)."""
        secret = self.password if password is None else password
        return f"postgresql://{USER}:{secret}@127.0.0.1:{self.port}/{database}"

    def start(self, timeout: float = SERVICE_START_S) -> None:
        """Start the server (again, after ``stop``/``kill``) and wait until it answers."""
        log = (self.root / "server.log").open("a")
        self.proc = subprocess.Popen(
            [
                str(self.bin / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-k",
                str(self.root),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=50",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            **self.run_as,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PgUnavailable(f"postgres exited at start: {self.log_tail()}")
            if self._answers():
                return
            time.sleep(0.2)
        self.stop()
        raise PgUnavailable(f"postgres did not answer within {timeout:.0f} s: {self.log_tail()}")

    def _answers(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url(), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def log_tail(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace")[-400:] if path.exists() else ""

    def stop(self, sig: int = signal.SIGINT) -> None:
        """Stop the server by its PID (SIGINT: fast shutdown; SIGKILL: a crash) and reap it."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        children = self._children(proc.pid) if sig == signal.SIGKILL else []
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        for pid in children:  # a killed postmaster's backends outlive it: end them by PID
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            (self.data / "postmaster.pid").unlink()

    @staticmethod
    def _children(pid: int) -> list[int]:
        import psutil

        try:
            return [child.pid for child in psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            return []

    def create_database(self, name: str) -> str:
        """Create an empty database and return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def running_postgres() -> contextlib.AbstractContextManager[PgServer]:
    """A started server for the block; stopped by PID and its folder removed afterwards."""
    return running(PgServer())


def postgres_or_skip() -> Iterator[PgServer]:
    """Fixture body: a running server, or a skip that prints why none could start."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: pip install 'langgraph-checkpoint-postgres'")
    try:
        cm = running_postgres()
        server = cm.__enter__()
    except (PgUnavailable, OSError, subprocess.SubprocessError) as exc:
        print(f"PostgreSQL unavailable: {exc}")
        pytest.skip(f"PostgreSQL cannot start here: {exc}")
    try:
        yield server
    finally:
        cm.__exit__(None, None, None)
