"""A throw-away Milvus standalone server for `service` tests and benchmarks (PyPI `milvus`).

``make milvus-server`` installs PyPI's ``milvus`` 2.3.5 (an embedded Milvus standalone) into
``.milvus-venv``. ``milvus-server --data DIR`` listens on 127.0.0.1: every port it lets us set
(the proxy, the embedded etcd's client port, the coordinators) is given a free one here. The
embedded etcd's peer port (2380) cannot be set, so these servers run one at a time per machine:
a lock file serialises them (a second waits up to 15 minutes). The launcher runs the server
as a child process that outlives a SIGTERM to the launcher: both are stopped by PID. Whatever
keeps it from starting raises ``MilvusUnavailable`` with the reason, which fixtures turn into a
printed skip.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.bounded import SERVICE_START_S
from tests.services import free_port, running

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
START_S = SERVICE_START_S  # a cold start on 2 busy cores took about a minute
ETCD_PEER_PORT = 2380  # the embedded etcd's peer port: fixed by the package, not settable
LOCK = Path(tempfile.gettempdir()) / "factdebate-milvus-server.lock"
LOCK_WAIT_S = 900.0  # how long a second server waits for the first to stop


class MilvusUnavailable(RuntimeError):
    """The Milvus server cannot run here; the message says why."""


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
        self._lock: int | None = None

    def _take_lock(self) -> None:
        """One server of this package at a time per machine: its etcd peer port is fixed."""
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise MilvusUnavailable(
                        f"another PyPI Milvus server held {LOCK} for {LOCK_WAIT_S:.0f} s"
                    ) from None
                time.sleep(1.0)
        self._lock = fd
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", ETCD_PEER_PORT)) == 0:
                self._release()
                raise MilvusUnavailable(
                    f"port {ETCD_PEER_PORT} (the embedded etcd's fixed peer port) is in use"
                )

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor drops the lock
            self._lock = None

    @property
    def uri(self) -> str:
        """The server's URI for pymilvus and ``--milvus-uri``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = START_S) -> None:
        """Start the launcher and wait for the server to answer; raises MilvusUnavailable."""
        self._take_lock()
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
                self.stop()
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
        self._release()

    def cleanup(self) -> None:
        """Remove the data folder when this object made it."""
        if self.own:
            shutil.rmtree(self.data, ignore_errors=True)


def running_milvus(data: Path | None = None) -> contextlib.AbstractContextManager[MilvusServer]:
    """A started server for the block; stopped by PID and its folder removed afterwards."""
    return running(MilvusServer(data))
