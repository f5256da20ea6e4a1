"""The server's context check in process: a request through ContextCheck to a recording stand-in."""

from __future__ import annotations

from typing import Any

import httpx

from factdebate.server.app import ContextCheck


class Downstream:
    """Stands in for the server: records the request bodies that reach it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        self.bodies.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


async def send(method: str, path: str, payload: Any) -> tuple[httpx.Response, Downstream]:
    """Send ``payload`` as JSON through ContextCheck: its response, and what reached the server."""
    downstream = Downstream()
    transport = httpx.ASGITransport(app=ContextCheck(downstream))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.request(method, path, json=payload), downstream
