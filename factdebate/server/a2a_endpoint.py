"""A2A for agents: each served method an A2A agent, on `a2a-sdk`'s server (protocol 1.0).

Routed by the server's custom app (``factdebate.server.app``, ``http.app`` in
``langgraph.json``) ahead of the LangGraph server's own A2A route, at the same paths:
JSON-RPC at ``/a2a/{assistant_id}`` (a method's name or an assistant's id), its agent card
at ``/a2a/{assistant_id}/.well-known/agent-card.json`` (a2a-sdk's well-known path), at ``GET
/a2a/{assistant_id}`` and at ``/.well-known/agent-card.json?assistant_id=...``. `a2a-sdk`
does the protocol: JSON-RPC, the event stream, the task store (in memory, per caller, the
latest ``MAX_TASKS``: a restart forgets them). A message's parts are the method's input and
its ``context`` the run's settings (``factdebate.server.a2a_input``), checked as the MCP
tools check theirs; the run starts
through the server's in-process client (``factdebate.server.served_runs``), each finished
step is a ``working`` status update, and the result contract is the task's artifact: a data
part and its JSON text. A bad argument or setting is a JSON-RPC error with the CLI's one
line; a run that fails is a ``failed`` task whose status says why. A caller that leaves
does not end the run: its task completes and ``GetTask`` returns it; ``CancelTask`` ends it.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
from collections import OrderedDict

from a2a.helpers.proto_helpers import new_data_part, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSION_1_0
from a2a.utils.errors import InvalidParamsError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from factdebate.graphs.registry import METHODS, MethodSpec
from factdebate.server.a2a_input import message_arguments, request_settings
from factdebate.server.auth import caller
from factdebate.server.bodies import read_body, replaying
from factdebate.server.mcp_endpoint import run_input
from factdebate.server.served_runs import (
    RunFailed,
    RunRefused,
    one_line,
    result_text,
    run_served,
)

PATH = "/a2a/{assistant_id}"
PROTOCOL_VERSION = PROTOCOL_VERSION_1_0
"""The A2A version served: a request says it in its ``A2A-Version`` header (a2a-sdk's rule)."""
MAX_TASKS = 10_000
"""Tasks the server keeps in memory for ``GetTask``; past it, the oldest is forgotten."""
_PARAMS = "factdebate.a2a.params"
"""Where the request's JSON-RPC ``params``, as sent, wait in the ASGI scope for the executor."""


def _version() -> str:
    try:
        return importlib.metadata.version("factdebate")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def agent_card(url: str, name: str, spec: MethodSpec) -> AgentCard:
    """The card of one method served at ``url``: what it reads and returns, how to call it."""
    inputs = ["application/json"] + ([] if spec.input_kind == "answer" else ["text/plain"])
    outputs = ["application/json", "text/plain"]
    return AgentCard(
        name=name,
        description=spec.tool_description,
        version=_version(),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION)
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=inputs,
        default_output_modes=outputs,
        skills=[
            AgentSkill(
                id=spec.name,
                name=spec.description,
                description=spec.tool_description,
                tags=[spec.role, spec.family, spec.input_kind],
                input_modes=inputs,
                output_modes=outputs,
            )
        ],
    )


async def method_of(ref: str) -> tuple[str, MethodSpec] | None:
    """The name and method an A2A path names: a method, or an assistant of one; None: neither."""
    if ref in METHODS:
        return ref, METHODS[ref]
    from langgraph_sdk import get_client

    try:
        assistant = await get_client(url=None).assistants.get(ref)
    except Exception:  # no such assistant (a 404 or 422 of the server)
        return None
    graph = assistant.get("graph_id")
    if graph not in METHODS:
        return None
    return str(assistant.get("name") or graph), METHODS[graph]


def _owner(context: ServerCallContext) -> str:
    """Whose tasks these are: the caller's identity (tasks are kept per caller)."""
    return str(context.state.get("owner") or "")


class BoundedTaskStore(InMemoryTaskStore):
    """a2a-sdk's in-memory task store, per caller, keeping the latest ``limit`` tasks."""

    def __init__(self, limit: int = MAX_TASKS) -> None:
        """An empty store; past ``limit`` tasks the oldest one is forgotten."""
        if not 1 <= limit <= 10 * MAX_TASKS:
            raise ValueError(f"the A2A task limit must be within 1..{10 * MAX_TASKS}")
        super().__init__(owner_resolver=_owner)
        self.limit = limit
        self.kept: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Save ``task``, forgetting the oldest task beyond the limit."""
        await super().save(task, context)
        self.kept[(_owner(context), task.id)] = None
        while len(self.kept) > self.limit:
            (owner, oldest), _ = self.kept.popitem(last=False)
            await super().delete(oldest, ServerCallContext(state={"owner": owner}))

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget ``task_id``."""
        await super().delete(task_id, context)
        self.kept.pop((_owner(context), task_id), None)


class _CallContext(DefaultServerCallContextBuilder):
    """a2a-sdk's call context plus the assistant the path names, the params and the caller."""

    def build(self, request: Request) -> ServerCallContext:
        """The call context of one request."""
        context = super().build(request)
        context.state["assistant"] = request.path_params.get("assistant_id", "")
        context.state["params"] = request.scope.get(_PARAMS)
        headers = {k.lower(): v for k, v in request.headers.raw}
        server = request.scope.get("server") or (None, None)
        try:
            context.state["owner"] = caller(headers, server[0])[0]
        except Exception:  # refused before it got here (app.py's middleware): no owner
            context.state["owner"] = ""
        return context


class MethodExecutor(AgentExecutor):
    """Runs the method an A2A path names on the message's input and the request's settings."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Check the call, run it, report each finished step, and end with the result."""
        state = context.call_context.state
        found = await method_of(str(state.get("assistant") or ""))
        if found is None:
            raise InvalidParamsError(
                message=f"no method or assistant {state.get('assistant')!r} on this server"
            )
        _, spec = found
        params = state.get("params")
        message = params.get("message") if isinstance(params, dict) else None
        try:
            arguments = {
                **message_arguments(spec, message),
                "settings": request_settings(params),
            }
            payload, settings = await asyncio.to_thread(run_input, spec, arguments)
        except ValueError as exc:
            raise InvalidParamsError(message=one_line(exc)) from None
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)

        async def started() -> None:
            if context.current_task is None:
                history = [context.message] if context.message is not None else []
                task = new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, None, history)
                await event_queue.enqueue_event(task)
            await updater.start_work()

        async def step(number: int, words: str) -> None:
            said = updater.new_agent_message([new_text_part(words)])
            await updater.update_status(
                TaskState.TASK_STATE_WORKING, message=said, metadata={"step": number}
            )

        assistant = str(state.get("assistant"))
        try:
            result = await run_served(assistant, payload, settings, step, started)
        except RunRefused as exc:
            raise InvalidParamsError(message=str(exc)) from None
        except RunFailed as exc:
            await updater.failed(updater.new_agent_message([new_text_part(str(exc))]))
            return
        await updater.add_artifact(
            [new_data_part(result, "application/json"), new_text_part(result_text(result))],
            name="result",
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Mark the task cancelled (its run ends as a2a-sdk cancels the execution)."""
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()


def _detail(status: int, line: str) -> JSONResponse:
    return JSONResponse({"detail": line}, status_code=status)


class Endpoint:
    """The A2A routes (JSON-RPC and agent cards) and the handler that keeps their tasks."""

    def __init__(self) -> None:
        """One request handler and in-memory task store for every served method."""
        base = agent_card("/a2a", "factdebate", METHODS["tool-mad"])
        self.handler = DefaultRequestHandler(
            agent_executor=MethodExecutor(),
            task_store=BoundedTaskStore(),
            agent_card=base,
        )

    def routes(self) -> list[BaseRoute]:
        """JSON-RPC at ``/a2a/{assistant_id}`` (with and without a slash), and the cards."""
        rpc: list[BaseRoute] = []
        for path in (PATH, PATH + "/"):
            for route in create_jsonrpc_routes(self.handler, path, context_builder=_CallContext()):
                assert isinstance(route, Route)
                route.app = _keeping_params(route.app)
                route.include_in_schema = False  # langgraph-api's route documents the path
                rpc.append(route)
        cards = [
            PATH,
            PATH + "/",
            PATH + AGENT_CARD_WELL_KNOWN_PATH,
            PATH + "/.well-known/agent.json",
            AGENT_CARD_WELL_KNOWN_PATH,
        ]
        return rpc + [
            Route(path, self.card, methods=["GET"], include_in_schema=False) for path in cards
        ]

    async def card(self, request: Request) -> Response:
        """The agent card of the method or assistant the path or ``assistant_id`` names."""
        ref = request.path_params.get("assistant_id") or request.query_params.get("assistant_id")
        if not ref:
            return _detail(400, "name the agent: /a2a/ASSISTANT_ID or ?assistant_id=ASSISTANT_ID")
        found = await method_of(ref)
        if found is None:
            return _detail(404, f"no method or assistant {ref!r} on this server")
        name, spec = found
        url = str(request.base_url).rstrip("/") + f"/a2a/{ref}"
        return JSONResponse(agent_card_to_dict(agent_card(url, name, spec)))

    async def aclose(self) -> None:
        """End the tasks still running (the server is stopping)."""
        await self.handler.aclose()


def _keeping_params(app: ASGIApp) -> ASGIApp:
    """``app`` with the request's JSON-RPC ``params``, as sent, kept in the scope.

    a2a-sdk parses a request into protocol types, where every number becomes a float and
    fields the protocol lacks (``params.context``) are dropped; the executor reads the input
    and the settings from the JSON itself.
    """

    async def kept(scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        if body is None:
            await JSONResponse({"detail": "request body too large"}, 413)(scope, receive, send)
            return
        try:
            data = json.loads(body) if body else None
        except (ValueError, RecursionError):
            data = None  # a2a-sdk answers malformed JSON itself
        params = data.get("params") if isinstance(data, dict) else None
        await app({**scope, _PARAMS: params}, replaying(body, receive), send)

    return kept
