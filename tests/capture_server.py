"""A TCP listener on 127.0.0.1 that records every connection's bytes and answers HTTP 500.

Tests name it as a model endpoint or a Milvus host a client should never reach: what it
received (HTTP/1 headers with keys; the preface and first frames of an HTTP/2 connection,
what a gRPC client such as pymilvus sends before anything else) shows whether anything was
sent there: any connection at all is recorded.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HTTP2_IDLE_S = 0.5  # an HTTP/2 (gRPC) connection is read until it sends nothing for this long
REPLY = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class CaptureServer:
    """A listening socket and the bytes each accepted connection sent."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.received: list[bytes] = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    @property
    def url(self) -> str:
        """Its address as an HTTP base URL."""
        return f"http://127.0.0.1:{self.port}"

    def text(self) -> str:
        """Everything received so far, decoded leniently."""
        with self.lock:
            return b"\n".join(self.received).decode("latin-1")

    def serve(self) -> None:
        """Accept connections until stopped; read each for a moment, then answer 500."""
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        data = b""
        conn.settimeout(1.0)
        try:
            while len(data) < 1_000_000:
                if data.startswith(HTTP2_PREFACE):  # gRPC: frames follow, no blank line ends them
                    conn.settimeout(HTTP2_IDLE_S)
                elif b"\r\n\r\n" in data:
                    break
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        with self.lock:  # recorded before the answer: a client that has its 500 finds it here
            self.received.append(data)
        try:
            conn.sendall(REPLY)
        except OSError:
            pass
        finally:
            conn.close()


@contextmanager
def capture_server() -> Iterator[CaptureServer]:
    """A running CaptureServer for the block; stopped and closed afterwards."""
    server = CaptureServer()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopped.set()
        thread.join(timeout=5)
        server.sock.close()
