"""LangGraph server middleware: a run's settings are checked before any run exists.

The served graphs (``graphs/served.py``) refuse a client-named host, path, encoder or
collection when a run's settings are built, whatever route started the run. Registered in
``langgraph.json`` (``http.app``), this middleware answers the routes it knows earlier: a 422
naming the unknown or bad setting before any run, cron or assistant exists. It checks
``context`` and ``config.configurable`` of every request that creates runs, crons or
assistants or changes an assistant or a cron (an assistant named by its id is looked up for
its graph), ``run.start`` commands, MCP tool calls and A2A messages, against the operator
policy (``factdebate.nodes.policy``); bounds every JSON body's size and nesting; and lets a
paused review go on only with a decision that fits, once (``factdebate.server.decisions``:
``command.resume`` and the v2 ``run.start`` / ``input.respond`` alike), and refuses what
would end or rewrite a review without one. Routes that do harm whoever calls (the dev
server's ``/deploy`` and ``/internal/*``) are refused; every error body it passes on or
writes has its secrets redacted. Who may call which action is ``factdebate.server.auth``'s
(LangGraph custom auth, ``auth`` in ``langgraph.json``). Parsing and checks run off the
event loop. It refuses a run with review where no thread can keep its pause
(``NEEDS_THREAD``), mounts factdebate's MCP endpoint at ``/mcp``
(``factdebate.server.mcp_endpoint``) and its A2A endpoint at ``/a2a/{assistant_id}``
(``factdebate.server.a2a_endpoint``, ahead of the LangGraph server's own route there).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import fields
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factdebate.evidence import served_hook
from factdebate.graphs.registry import METHODS, context_class
from factdebate.nodes.policy import operator_problem
from factdebate.nodes.review import NEEDS_THREAD
from factdebate.server.a2a_endpoint import Endpoint as A2AEndpoint
from factdebate.server.auth import run_refusal
from factdebate.server.bodies import MAX_BODY_BYTES, read_body, replaying
from factdebate.server.decisions import (
    NEW_INPUT,
    NO_DECISION,
    OneResumeAtATime,
    conflict_as_decided,
    creation_problem,
    rejecting,
    released_at_start,
    resume_of,
    resume_refusal,
)
from factdebate.server.mcp_endpoint import Endpoint
from factdebate.tools.core.evidence_hook import serve_frozen_with
from factdebate.tools.core.secrets import redact

# POST paths that create runs or crons (stateless or on a thread), and assistants
_CHECKED = re.compile(
    r"^(/threads/[^/]+)?/runs(/wait|/stream|/batch|/crons)?/?$|^/assistants/?$"
    r"|^/threads/[^/]+/commands/?$"  # protocol v2 commands: run.start carries config
    r"|^/mcp/?$|^/a2a/(?P<a2a>[^/]+)/?$"  # JSON-RPC calls that start runs with params.context
)
# PATCH paths that change an assistant or a cron (their settings apply to later runs)
_PATCHED = re.compile(r"^/assistants/(?P<assistant>[^/]+)/?$|^/runs/crons/(?P<cron>[^/]+)/?$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-?(?:[0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}")
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
IN_PROCESS = re.compile(r"^/mcp/?$|^/a2a/[^/]+(/.*)?$|^/\.well-known/agent-card\.json$")
"""The app's own routes (MCP, A2A and its cards): their runs start past LangGraph's auth."""
REFUSED = re.compile(r"^/(deploy|internal)(/.*)?$")
"""The dev server's own routes that do harm whoever calls: ``/deploy`` runs ``langgraph
deploy`` with the operator's LangSmith key, ``/internal/truncate`` deletes every thread."""
MAX_ERROR_BODY_BYTES = 1024 * 1024
MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects a request body may have (settings need a few)."""
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def checks(method: str, path: str) -> bool:
    """Whether this middleware checks the settings of a ``method`` request to ``path``."""
    return bool(
        (method == "POST" and _CHECKED.match(path)) or (method == "PATCH" and _PATCHED.match(path))
    )


def depth_problem(body: bytes, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why a JSON ``body`` nests too deep to parse safely, or None (strings do not count)."""
    depth = 0
    for byte in _STRING.sub(b"", body).translate(None, _NOT_BRACKET):
        depth += 1 if byte in b"[{" else -1
        if depth > limit:
            return f"request body nests deeper than {limit} levels"
    return None


def _classes(target: Any) -> list[type]:
    """The settings classes a request may target: its method's, or every method's."""
    if target in METHODS:
        return [context_class(str(target))]
    return [context_class(name) for name in METHODS]


def _settings_problem(settings: dict[str, Any], target: Any, *, partial: bool) -> str | None:
    """Type, bounds and operator checks of settings; ``partial``: other keys are not settings.

    An unknown ``target`` (an assistant that could not be looked up) is checked against every
    method that has all the given names: names no method has, or values no method accepts,
    are refused.
    """
    classes = _classes(target)
    known = {f.name for cls in classes for f in fields(cls)}
    if partial:  # config.configurable also carries the server's own keys (thread_id, ...)
        settings = {k: v for k, v in settings.items() if k in known}
    elif target not in METHODS:
        unknown = sorted(set(settings) - known)
        if unknown:
            return f"unknown setting(s): {', '.join(unknown)}"
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
    return operator_problem(settings, fitting or classes)


def context_problem(payload: Any, target: Any = None) -> str | None:
    """What is wrong with the settings of one run/assistant/cron request, if anything.

    ``target`` is the method the request runs or changes when the caller looked it up (an
    assistant named by id); by default the payload's ``graph_id`` or ``assistant_id``.
    """
    if not isinstance(payload, dict):
        return None
    # a new assistant's graph is its graph_id (its assistant_id is only the id it is given)
    target = target or payload.get("graph_id") or payload.get("assistant_id")
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


def rpc_problem(message: Any, target: Any = None) -> str | None:
    """What is wrong with the run settings of one MCP or A2A JSON-RPC message, if anything."""
    params = message.get("params") if isinstance(message, dict) else None
    context = params.get("context") if isinstance(params, dict) else None
    if context in (None, {}):
        return None
    if not isinstance(context, dict):
        return f"context must be an object of settings, got {type(context).__name__}"
    return _settings_problem(context, target, partial=False)


def command_problem(command: Any, target: Any = None) -> str | None:
    """What is wrong with the run settings of one protocol v2 command, if anything.

    ``run.start`` and ``input.respond`` both start a run with the ``config`` in their params.
    """
    if not isinstance(command, dict) or command.get("method") not in ("run.start", "input.respond"):
        return None
    params = command.get("params")
    return context_problem(params, target) if isinstance(params, dict) else None


_STATELESS = re.compile(r"^/runs(/wait|/stream|/batch|/crons)?/?$")
"""POST paths of runs without a thread (the server keeps no checkpoint of them)."""


def _review_setting(source: Any) -> Any:
    """The ``review`` a run request or assistant sets (context, else configurable); None: unset."""
    if not isinstance(source, dict):
        return None
    for settings in (source.get("context"), (source.get("config") or {}).get("configurable")):
        if isinstance(settings, dict) and "review" in settings:
            return settings["review"]
    return None


def stateless_review(path: str, payload: Any, assistant: Any = None) -> bool:
    """Whether a request starts a run with review where no thread keeps its pause.

    Runs without a thread (``/runs...``) and MCP tool calls (always stateless on a LangGraph
    server) cannot pause for a person: a run's own ``review`` wins over its assistant's.
    """
    if _STATELESS.match(path):
        settings = payload
    elif path.rstrip("/") == "/mcp" and isinstance(payload, dict):
        if payload.get("method") != "tools/call":
            return False
        settings = payload.get("params")
    else:
        return False
    wanted = _review_setting(settings)
    return bool(_review_setting(assistant) if wanted is None else wanted)


def _payloads(data: Any) -> list[Any]:
    """The run/assistant/cron requests in one body (a batch is a list of them)."""
    return data if isinstance(data, list) else [data]


def _assistant_ref(path: str, payload: Any) -> str | None:
    """The assistant (name or id) a request runs or changes, when the request names one."""
    patched, a2a = _PATCHED.match(path), _CHECKED.match(path)
    if patched and patched["assistant"]:
        return patched["assistant"]
    if a2a and a2a["a2a"]:
        return a2a["a2a"]
    if not isinstance(payload, dict):
        return None
    if isinstance(payload.get("params"), dict) and "/commands" in path:
        payload = payload["params"]
    ref = payload.get("graph_id") or payload.get("assistant_id")
    return ref if isinstance(ref, str) else None


def body_problem(path: str, data: Any, targets: list[Any]) -> str | None:
    """The first problem with the settings of a checked request's parsed body, if any."""
    rpc = path.startswith(("/mcp", "/a2a"))
    command = path.rstrip("/").endswith("/commands")
    for payload, target in zip(_payloads(data), targets, strict=True):
        if command:
            problem = command_problem(payload, target)
        else:
            problem = rpc_problem(payload, target) if rpc else None
            problem = problem or context_problem(payload, target)
        problem = problem or webhook_problem(payload)
        if problem:
            return problem
    return None


def webhook_problem(payload: Any) -> str | None:
    """Why a run asks for a webhook: the server would post its output to an address it names."""
    params = payload.get("params") if isinstance(payload, dict) else None
    for source in (payload, params):
        if isinstance(source, dict) and source.get("webhook"):
            return (
                "webhooks are not sent from this server: a run's output goes to no address a "
                "request names; join or stream the run instead"
            )
    return None


def _parse(body: bytes) -> tuple[Any, str | None]:
    """A request body as JSON (None when it is not JSON: the server says so), or its problem."""
    problem = depth_problem(body)
    if problem:
        return None, problem
    try:
        return (json.loads(body) if body else None), None
    except (ValueError, RecursionError):
        return None, None  # the server reports malformed JSON itself


class ContextCheck:
    """Pure ASGI middleware: refuse a run whose context has unknown or invalid settings."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap the server's application."""
        self.app = app
        self.resumes = OneResumeAtATime()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read a request's JSON body, answer 413/422 on a bad one, else pass it on."""
        path, method = scope.get("path", ""), scope.get("method")
        if scope["type"] == "http" and REFUSED.match(path):
            await _reply(send, 403, f"{path} is not served here (it deploys or deletes)")
            return
        if scope["type"] == "http" and IN_PROCESS.match(path):
            refused = run_refusal(scope)  # its runs start in process, past LangGraph's auth
            if refused is not None:
                await _reply(send, *refused)
                return
        if scope["type"] == "http":
            send = redacting_errors(send)
        if scope["type"] != "http" or method not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        read = await read_body(receive)
        if read is None:
            await _reply(send, 413, f"request body over {MAX_BODY_BYTES} bytes")
            return
        body = read
        data, problem = await asyncio.to_thread(_parse, body)
        targets: list[str | None] = []
        if problem is None and checks(str(method), path):
            found: dict[str | None, str | None] = {}
            for payload in _payloads(data):
                ref = _assistant_ref(path, payload)
                if ref not in found:
                    found[ref] = await self._target(scope, path, ref)
                targets.append(found[ref])
            problem = await asyncio.to_thread(body_problem, path, data, targets)
            problem = problem or await self._review_problem(scope, path, data)
        problem = problem or creation_problem(path, method, data)
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
            if resume.route in ("state", "copy") or resume.value in (NEW_INPUT, NO_DECISION):
                release()  # no decision: the server answers it as it would any request
                await self._forward(scope, body, receive, send)
                return
            body = json.dumps(rejecting(resume, data)).encode("utf-8")
            scope = {**scope, "headers": _with_length(scope.get("headers", []), len(body))}
            send = conflict_as_decided(released_at_start(send, release), resume.thread, _reply)
            await self._forward(scope, body, receive, send)

    async def _review_problem(self, scope: Scope, path: str, data: Any) -> str | None:
        """``NEEDS_THREAD`` for a run with review (its own or its assistant's) and no thread."""
        if not (_STATELESS.match(path) or path.rstrip("/") == "/mcp"):
            return None
        for payload in _payloads(data):
            ref = _assistant_ref(path, payload)
            assistant = None
            if ref and _UUID.fullmatch(ref) and _review_setting(payload) is None:
                assistant = await self._get_json(scope, f"/assistants/{ref}")
            if stateless_review(path, payload, assistant):
                return NEEDS_THREAD
        return None

    async def _forward(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        """Pass the request on to the server with ``body`` (already read) as its body."""
        await self.app(scope, replaying(body, receive), send)

    async def _target(self, scope: Scope, path: str, ref: str | None) -> str | None:
        """The method a request runs or changes: ``ref``, or the graph of an assistant or cron."""
        patched = _PATCHED.match(path)
        if ref is None and patched and patched["cron"]:
            cron = await self._get_json(scope, f"/runs/crons/{patched['cron']}")
            ref = cron.get("assistant_id") if isinstance(cron, dict) else None
        if ref is None or ref in METHODS or not _UUID.fullmatch(ref):
            return ref
        assistant = await self._get_json(scope, f"/assistants/{ref}")
        graph = assistant.get("graph_id") if isinstance(assistant, dict) else None
        return graph if graph in METHODS else None

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


def redacting_errors(send: Send) -> Send:
    """``send`` whose error answers (status 400 and up) reach the client with secrets redacted.

    An error body may echo what the request held (a 422 quoting a URL with its password);
    it is gathered (up to 1 MiB, the rest passes as it is) and redacted before it is sent.
    """
    start: Message | None = None
    held = bytearray()

    async def wrapped(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start" and int(message.get("status", 200)) >= 400:
            start = message
            return
        if start is None or message["type"] != "http.response.body":
            await send(message)
            return
        held.extend(message.get("body", b""))
        more = bool(message.get("more_body", False))
        if more and len(held) <= MAX_ERROR_BODY_BYTES:
            return
        body = redact(held.decode("utf-8", errors="replace")).encode("utf-8")
        headers = list(start.get("headers", []))
        if more:  # the rest streams on: the length is no longer known
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        else:
            headers = _with_length(headers, len(body))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": more})
        start = None
        held.clear()

    return wrapped


async def _reply(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": redact(detail)}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


serve_frozen_with(served_hook)  # a run reads the frozen evidence the operator listed
mcp = Endpoint()  # /mcp: the catalog's methods as tools, with progress (mcp_endpoint.py)
a2a = A2AEndpoint()  # /a2a/{assistant_id}: each method an A2A agent (a2a_endpoint.py)


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Run MCP's session manager while the server runs; end A2A's running tasks after."""
    async with mcp.lifespan(app):
        try:
            yield
        finally:
            await a2a.aclose()


app = Starlette(
    routes=[Route("/mcp", endpoint=mcp.app), *a2a.routes()],
    middleware=[Middleware(ContextCheck)],
    lifespan=lifespan,
)
