"""What the tests' local servers share: a free loopback port, and a started-then-stopped block."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from socketserver import BaseServer
from typing import Protocol, TypeVar


def free_port() -> int:
    """A TCP port nothing listens on now on 127.0.0.1 (bound to 0 and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server(Protocol):
    """A test server that starts, stops by its PID and removes its own folder."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def cleanup(self) -> None: ...


S = TypeVar("S", bound=Server)


@contextlib.contextmanager
def running(server: S) -> Iterator[S]:
    """``server`` started for the block; stopped and its folder removed afterwards."""
    try:
        server.start()
        yield server
    finally:
        server.stop()
        server.cleanup()


@contextlib.contextmanager
def serving_in_thread(http: BaseServer) -> Iterator[None]:
    """An in-process HTTP server answering for the block; shut and closed afterwards."""
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        http.shutdown()
        http.server_close()
        thread.join(timeout=5)


def stop_group(proc: subprocess.Popen[bytes], grace_s: float = 20) -> None:
    """Stop a server started in its own process group: SIGTERM, then SIGKILL after ``grace_s``."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
