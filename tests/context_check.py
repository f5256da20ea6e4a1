"""The server's context check in process: a request through ContextCheck to a recording stand-in."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from factdebate.server.app import ContextCheck


class Downstream:
    """Stands in for the server: records the request bodies that reach it.

    ``GET /assistants/ID`` answers with the graph of ``assistants[ID]`` and
    ``GET /runs/crons/ID`` with the assistant of ``crons[ID]`` (404 for others): the
    look-ups the check makes for an assistant or a cron named by id.
    """

    def __init__(
        self, assistants: Mapping[str, str] | None = None, crons: Mapping[str, str] | None = None
    ) -> None:
        self.bodies: list[bytes] = []
        self.looked_up: list[str] = []
        self.assistants = dict(assistants or {})
        self.crons = dict(crons or {})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        path, found = scope["path"], None
        if scope["method"] == "GET":
            self.looked_up.append(path)
            kind, _, ident = path.strip("/").rpartition("/")
            if kind == "assistants" and ident in self.assistants:
                found = {"assistant_id": ident, "graph_id": self.assistants[ident]}
            elif kind == "runs/crons" and ident in self.crons:
                found = {"cron_id": ident, "assistant_id": self.crons[ident]}
            status, body = (200, json.dumps(found).encode()) if found else (404, b"{}")
        else:
            self.bodies.append(message.get("body", b""))
            status, body = 200, b"{}"
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})


LOOPBACK = "http://127.0.0.1"
"""The served app's address in these tests: a loopback one, as `langgraph dev` binds."""


async def send(
    method: str, path: str, payload: Any, downstream: Downstream | None = None
) -> tuple[httpx.Response, Downstream]:
    """Send ``payload`` as JSON through ContextCheck: its response, and what reached the server."""
    downstream = downstream or Downstream()
    transport = httpx.ASGITransport(app=ContextCheck(downstream))
    async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK) as client:
        return await client.request(method, path, json=payload), downstream


async def send_raw(method: str, path: str, body: bytes) -> tuple[httpx.Response, Downstream]:
    """Send raw ``body`` bytes through ContextCheck (malformed or hostile JSON)."""
    downstream = Downstream()
    transport = httpx.ASGITransport(app=ContextCheck(downstream))
    async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK) as client:
        headers = {"content-type": "application/json"}
        return await client.request(method, path, content=body, headers=headers), downstream
