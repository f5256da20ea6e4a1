"""A free loopback port for the servers the tests start (never a fixed one: 2024 may be taken)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port nothing listens on now on 127.0.0.1 (bound to 0 and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
