"""LangGraph server middleware: a run's context is checked like the CLI's and API's settings.

The server itself drops context keys its schema does not list, silently; registered in
``langgraph.json`` (``http.app``), this middleware answers such a request with a 422 naming
the unknown or bad setting before any run is created.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import fields
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware

from factdebate.graphs.registry import METHODS, context_class

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# POST paths that create runs or crons (stateless or on a thread), and assistants
_CHECKED = re.compile(r"^(/threads/[^/]+)?/runs(/wait|/stream|/batch|/crons)?/?$|^/assistants/?$")
MAX_BODY_BYTES = 16 * 1024 * 1024


def context_problem(payload: Any) -> str | None:
    """What is wrong with the ``context`` of one run/assistant request, if anything."""
    if not isinstance(payload, dict) or payload.get("context") in (None, {}):
        return None
    # a new assistant's graph is its graph_id (its assistant_id is only the id it is given)
    context, target = payload["context"], payload.get("graph_id") or payload.get("assistant_id")
    if not isinstance(context, dict):
        return f"context must be an object of settings, got {type(context).__name__}"
    if target in METHODS:
        try:
            context_class(str(target)).from_settings(context)
        except ValueError as exc:
            return str(exc)
        return None
    # An assistant named by id: its graph is not known here; still refuse names no method has.
    known = {f.name for name in METHODS for f in fields(context_class(name))}
    unknown = sorted(set(context) - known)
    return f"unknown setting(s): {', '.join(unknown)}" if unknown else None


class ContextCheck:
    """Pure ASGI middleware: refuse a run whose context has unknown or invalid settings."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap the server's application."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read a checked request's body, answer 422 on a bad context, else pass it on."""
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or not _CHECKED.match(scope.get("path", ""))
        ):
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > MAX_BODY_BYTES:
                await _reply(send, 413, f"request body over {MAX_BODY_BYTES} bytes")
                return
        try:
            data = json.loads(body) if body else None
        except ValueError:
            data = None  # the server reports malformed JSON itself
        payloads = data if isinstance(data, list) else [data]
        for payload in payloads:
            problem = context_problem(payload)
            if problem:
                await _reply(send, 422, problem)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _reply(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


app = Starlette(middleware=[Middleware(ContextCheck)])
