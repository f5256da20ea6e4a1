"""A request's body read whole within a bound, and handed again to the app behind."""

from __future__ import annotations

from starlette.types import Message, Receive

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body the served app reads (a larger one is answered 413)."""


async def read_body(receive: Receive, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """The request's whole body, or None as soon as it passes ``limit`` bytes."""
    body, more = bytearray(), True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = bool(message.get("more_body", False))
        if len(body) > limit:
            return None
    return bytes(body)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` (already read) first, then the connection's messages."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
