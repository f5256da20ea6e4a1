"""A throw-away Milvus standalone server for `service` tests and benchmarks (PyPI `milvus`).

``make milvus-server`` installs PyPI's ``milvus`` 2.3.5 (an embedded Milvus standalone) into
``.milvus-venv``. ``milvus-server --data DIR`` listens on 127.0.0.1: every port it opens (the
proxy and the embedded etcd and coordinators) is given a free one here, so two servers never
collide. The launcher runs the server as a child process that outlives a SIGTERM to the
launcher: both are stopped by PID. Whatever keeps it from starting raises
``MilvusUnavailable`` with the reason, which fixtures turn into a printed skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / ".milvus-venv" / "bin" / "milvus-server"
PORTS = (
    "etcd-port",
    "root-coord-port",
    "proxy-internal-port",
    "query-coord-port",
    "query-node-port",
    "index-coord-port",
    "index-node-port",
    "data-coord-port",
    "data-node-port",
)
START_S = 180.0  # a cold start on 2 busy cores took about a minute


class MilvusUnavailable(RuntimeError):
    """The Milvus server cannot run here; the message says why."""


def free_port() -> int:
    """A TCP port nothing listens on now (bound to 0 and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MilvusServer:
    """One server on a data folder; ``start`` waits until a client can list collections."""

    def __init__(self, data: Path | None = None) -> None:
        """Prepare a server on ``data`` (a new temp folder unless given); starts nothing."""
        if not LAUNCHER.exists():
            raise MilvusUnavailable(
                f"{LAUNCHER} is missing: run `make milvus-server` (PyPI milvus 2.3.5 in its venv)"
            )
        self.own = data is None
        self.data = data or Path(tempfile.mkdtemp(prefix="factdebate-milvus-"))
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.children: list[int] = []

    @property
    def uri(self) -> str:
        """The server's URI for pymilvus and ``--milvus-uri``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = START_S) -> None:
        """Start the launcher and wait for the server to answer; raises MilvusUnavailable."""
        args = [str(LAUNCHER), "--data", str(self.data), "--proxy-port", str(self.port)]
        for name in PORTS:
            args += [f"--{name}", str(free_port())]
        log = (self.data / "launcher.log").open("ab")
        self.proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.data
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._note_children()
            if self.proc.poll() is not None and not self.children:
                raise MilvusUnavailable(f"milvus-server exited at start: {self.log_tail()}")
            if self._answers():
                self._note_children()
                return
            time.sleep(1.0)
        self.stop()
        raise MilvusUnavailable(f"Milvus did not answer within {timeout:.0f} s: {self.log_tail()}")

    def _note_children(self) -> None:
        import psutil

        if self.proc is None:
            return
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                if child.pid not in self.children:
                    self.children.append(child.pid)

    def _answers(self) -> bool:
        from pymilvus import MilvusClient

        with socket.socket() as probe:
            probe.settimeout(1.0)
            if probe.connect_ex(("127.0.0.1", self.port)) != 0:
                return False
        try:
            client = MilvusClient(self.uri, timeout=5)
            client.list_collections()
            client.close()
            return True
        except Exception:  # not ready yet: pymilvus raises several kinds
            return False

    def log_tail(self) -> str:
        """The end of the launcher's log (for skip reasons)."""
        path = self.data / "launcher.log"
        return path.read_text(errors="replace")[-400:].replace("\n", " ") if path.exists() else ""

    def stop(self) -> None:
        """Stop the launcher and its server child by PID (SIGTERM, then SIGKILL) and reap them."""
        import psutil

        self._note_children()
        proc, self.proc = self.proc, None
        pids = [*self.children, *([proc.pid] if proc is not None else [])]
        self.children = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).wait(timeout=max(deadline - time.monotonic(), 0.1))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, psutil.Error):
                if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie":
                    os.kill(pid, signal.SIGKILL)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)

    def cleanup(self) -> None:
        """Remove the data folder when this object made it."""
        if self.own:
            shutil.rmtree(self.data, ignore_errors=True)


@contextlib.contextmanager
def running_milvus(data: Path | None = None) -> Iterator[MilvusServer]:
    """A started server for the block; stopped by PID (launcher and child) afterwards."""
    server = MilvusServer(data)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        server.cleanup()
