"""LangGraph server middleware: a run's settings are checked before any run exists.

The server itself drops context keys its schema does not list, silently; registered in
``langgraph.json`` (``http.app``), this middleware answers such a request with a 422 naming
the unknown or bad setting before any run is created. It checks ``context`` and
``config.configurable`` of every request that creates runs, crons or assistants or changes
an assistant or a cron; refuses settings that reach the network or the disk unless the
operator allowed their values (``factdebate.server.policy``); and checks a review decision
sent to a paused thread, by any route that resumes one, against the thread's pending review
(``factdebate.server.decisions``), so a bad one changes nothing and a good one applies once.
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
from factdebate.server.decisions import (
    COMMANDS,
    OneResumeAtATime,
    conflict_as_decided,
    rejecting,
    released_at_start,
    resume_of,
    resume_refusal,
)
from factdebate.server.policy import operator_problem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# POST paths that create runs or crons (stateless or on a thread), and assistants
_CHECKED = re.compile(
    r"^(/threads/[^/]+)?/runs(/wait|/stream|/batch|/crons)?/?$|^/assistants/?$"
    r"|^/mcp/?$|^/a2a/[^/]+/?$"  # JSON-RPC calls that start runs with params.context
)
# PATCH paths that change an assistant or a cron (their settings apply to later runs)
_PATCHED = re.compile(r"^/assistants/[^/]+/?$|^/runs/crons/[^/]+/?$")
MAX_BODY_BYTES = 16 * 1024 * 1024


def _classes(target: Any) -> list[type]:
    """The settings classes a request may target: its method's, or every method's."""
    if target in METHODS:
        return [context_class(str(target))]
    return [context_class(name) for name in METHODS]


def _settings_problem(settings: dict[str, Any], target: Any, *, partial: bool) -> str | None:
    """Type, bounds and operator checks of settings; ``partial``: other keys are not settings."""
    classes = _classes(target)
    known = {f.name for cls in classes for f in fields(cls)}
    if partial:  # config.configurable also carries the server's own keys (thread_id, ...)
        settings = {k: v for k, v in settings.items() if k in known}
    if target in METHODS or partial:
        fitting = [c for c in classes if set(settings) <= {f.name for f in fields(c)}]
        errors: list[str] = []
        for cls in fitting or classes[:1]:
            try:
                cls.from_settings(settings)  # type: ignore[attr-defined]
                errors = []
                break
            except ValueError as exc:
                errors.append(str(exc))
        if errors:
            return errors[0]
    else:  # an assistant named by id: its graph is not known here; refuse names none has
        unknown = sorted(set(settings) - known)
        if unknown:
            return f"unknown setting(s): {', '.join(unknown)}"
    return operator_problem(settings, classes)


def context_problem(payload: Any) -> str | None:
    """What is wrong with the settings of one run/assistant/cron request, if anything."""
    if not isinstance(payload, dict):
        return None
    # a new assistant's graph is its graph_id (its assistant_id is only the id it is given)
    target = payload.get("graph_id") or payload.get("assistant_id")
    context = payload.get("context")
    if context not in (None, {}):
        if not isinstance(context, dict):
            return f"context must be an object of settings, got {type(context).__name__}"
        problem = _settings_problem(context, target, partial=False)
        if problem:
            return problem
    config = payload.get("config")
    configurable = config.get("configurable") if isinstance(config, dict) else None
    if configurable in (None, {}):
        return None
    if not isinstance(configurable, dict):
        return f"config.configurable must be an object, got {type(configurable).__name__}"
    return _settings_problem(configurable, target, partial=True)


def rpc_problem(message: Any) -> str | None:
    """What is wrong with the run settings of one MCP or A2A JSON-RPC message, if anything."""
    params = message.get("params") if isinstance(message, dict) else None
    context = params.get("context") if isinstance(params, dict) else None
    if context in (None, {}):
        return None
    if not isinstance(context, dict):
        return f"context must be an object of settings, got {type(context).__name__}"
    return _settings_problem(context, None, partial=False)


class ContextCheck:
    """Pure ASGI middleware: refuse a run whose context has unknown or invalid settings."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap the server's application."""
        self.app = app
        self.resumes = OneResumeAtATime()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read a checked request's body, answer 422 on a bad context, else pass it on."""
        path, method = scope.get("path", ""), scope.get("method")
        if scope["type"] != "http" or not (
            (method == "POST" and (_CHECKED.match(path) or COMMANDS.match(path)))
            or (method == "PATCH" and _PATCHED.match(path))
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
            problem = rpc_problem(payload) if path.startswith(("/mcp", "/a2a")) else None
            problem = problem or context_problem(payload)
            if problem:
                await _reply(send, 422, problem)
                return
        resume = resume_of(path, method, data)
        if resume is None:
            await self._forward(scope, body, receive, send)
            return
        # Decide once: one resume of a thread at a time here, from its check until its run
        # exists, and the server refuses (never queues) a run while another is in flight.
        async with self.resumes.hold(resume.thread) as release:
            refusal = await resume_refusal(resume, lambda where: self._get_json(scope, where))
            if refusal:
                await _reply(send, *refusal)
                return
            body = json.dumps(rejecting(resume, data)).encode("utf-8")
            scope = {**scope, "headers": _with_length(scope.get("headers", []), len(body))}
            send = conflict_as_decided(released_at_start(send, release), resume.thread, _reply)
            await self._forward(scope, body, receive, send)

    async def _forward(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        """Pass the request on to the server with ``body`` (already read) as its body."""
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _get_json(self, scope: Scope, path: str) -> Any:
        """GET ``path`` from the wrapped server (the caller's headers), as JSON; None on failure."""
        headers = [
            (k, v)
            for k, v in scope.get("headers", [])
            if k.lower() not in (b"content-length", b"content-type")
        ]
        inner = {
            **scope,
            "method": "GET",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": headers,
        }
        status, chunks = 0, []

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def collect(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(inner, receive, collect)
        if status != 200:
            return None
        try:
            return json.loads(b"".join(chunks))
        except ValueError:
            return None


def _with_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    """``headers`` with their content-length set to ``length``."""
    kept = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


async def _reply(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


app = Starlette(middleware=[Middleware(ContextCheck)])
