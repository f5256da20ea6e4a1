"""MCP for agents: catalog methods as tools whose runs report progress and answer in JSON.

Mounted at ``/mcp`` by the server's custom app (``factdebate.server.app``, ``http.app`` in
``langgraph.json``), in place of the LangGraph server's own MCP route, which answers only when
a run ends. Built on the official ``mcp`` SDK (streamable HTTP, stateless: every call stands
alone). Each tool call starts a run on this server (its in-process client), streams its
updates and sends one progress notification per finished step, so a client's read timeout
never runs out while a debate goes on; the reply is the result contract as
``structuredContent`` (checked against the tool's ``outputSchema``) and as JSON text. A
caller that goes away ends its run (``on_disconnect="cancel"``). A bad argument or setting is
answered with the one line the CLI prints, before any run starts.

The tools are the methods a user picks (``DEFAULT_TOOLS``); ``FACTDEBATE_MCP_TOOLS`` lists
others by name, or ``all`` for the whole catalog. Assistants a run created (``bench --server``'s
private ones) are never tools.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

from factdebate.graphs.registry import CONTRACT_KEYS, METHODS, MethodSpec
from factdebate.nodes.review import NEEDS_THREAD
from factdebate.server.served_runs import RunError, one_line, result_text, run_served
from factdebate.tools.core.errors import SettingsError

TOOLS_ENV = "FACTDEBATE_MCP_TOOLS"
DEFAULT_TOOLS = (
    "tool-mad",
    "madam-rag",
    "debate-cv",
    "mad-fact",
    "cot",
    "rag-cot",
    "madam-concat-rag",
    "single-verifier",
)
"""The four methods and one baseline of each paper: the tools an agent is shown by default."""
_TEXT = {"type": "string", "minLength": 1}
_DOCUMENTS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "title": {"type": "string"},
            "text": {"type": "string"},
            "source": {"type": "string"},
        },
        "required": ["text"],
    },
}
_FIELDS: dict[str, dict[str, Any]] = {
    "claim": {**_TEXT, "description": "The claim to check."},
    "question": {**_TEXT, "description": "The question to answer."},
    "answer": {**_TEXT, "description": "The long answer whose factuality is scored."},
    "references": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Reference answers (optional): recall and F1 are scored against them.",
    },
}
_REQUIRED = {"claim": ["claim"], "question": ["question"], "answer": ["question", "answer"]}
_CONTRACT_TYPES: dict[str, dict[str, Any]] = {
    "verdict": {"type": ["string", "null"], "description": "The verdict; null: none given."},
    "justification": {"type": ["string", "null"]},
    "decided_by": {"type": ["object", "null"], "description": "Who gave the verdict, and why."},
    "stop_reason": {"type": ["string", "null"]},
    "rounds": {"type": ["integer", "null"]},
    "transcript": {"type": "array", "items": {"type": "object"}},
    "cost": {"type": "object", "description": "Model calls and tokens per role and in total."},
    "errors": {"type": "array", "items": {"type": "object"}},
}


def tool_names(value: str | None = None) -> tuple[str, ...]:
    """The methods served as tools: ``value`` (default ``FACTDEBATE_MCP_TOOLS``) or the default.

    Raises:
        SettingsError: a name that is not a catalog method (one line, the server does not start).
    """
    text = (os.environ.get(TOOLS_ENV, "") if value is None else value).strip()
    if not text:
        return DEFAULT_TOOLS
    if text == "all":
        return tuple(METHODS)
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in METHODS]
    if unknown or not names:
        raise SettingsError(
            f"{TOOLS_ENV}: unknown method(s) {', '.join(unknown) or '(none)'}; give 'all' or "
            f"names from: {', '.join(METHODS)}"
        )
    return names


def input_schema(spec: MethodSpec) -> dict[str, Any]:
    """What a tool reads: its method's input fields, given documents if any, and its settings."""
    kind = spec.input_kind
    names = {"claim": ["claim"], "question": ["question"], "answer": ["question", "answer"]}[kind]
    if kind == "answer":
        names.append("references")
    properties = {name: _FIELDS[name] for name in names}
    if spec.given:
        properties[spec.given] = {
            **_DOCUMENTS,
            "description": "Documents to read instead of retrieving (optional).",
        }
    properties["settings"] = {
        "type": "object",
        "description": (
            f"The method's settings (`factdebate settings {spec.name}` lists them), each "
            "checked against the server's policy; `review` needs a thread and is refused here."
        ),
    }
    return {
        "type": "object",
        "properties": properties,
        "required": _REQUIRED[kind],
        "additionalProperties": False,
    }


def output_schema(spec: MethodSpec) -> dict[str, Any]:
    """What a tool returns: the result contract's keys and the method's own extras."""
    properties = dict(_CONTRACT_TYPES)
    for key in spec.extras:
        properties[key] = {"description": f"A {spec.name} result extra (docs/result-contract.md)."}
    return {"type": "object", "properties": properties, "required": list(CONTRACT_KEYS)}


def tool(spec: MethodSpec) -> types.Tool:
    """One method as an MCP tool: its catalog description and both schemas."""
    return types.Tool(
        name=spec.name,
        title=spec.description,
        description=spec.tool_description,
        input_schema=input_schema(spec),
        output_schema=output_schema(spec),
        annotations=types.ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True
        ),
    )


def refusal(message: object) -> types.CallToolResult:
    """A tool error an agent can act on: the one line the CLI prints."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=one_line(message))], is_error=True
    )


def run_input(spec: MethodSpec, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """The graph input and settings of a call, checked as the CLI checks them.

    Raises:
        ValueError: an unknown argument, a missing or bad input field or a bad setting; its
            message is the one line a caller is shown.
    """
    from factdebate.api import build_context, make_input
    from factdebate.nodes.claims import clean_claim, given_documents

    allowed = set(input_schema(spec)["properties"])
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise ValueError(
            f"{spec.name} takes no argument(s) {', '.join(unknown)}: it reads "
            f"{', '.join(sorted(allowed))}"
        )
    settings = arguments.get("settings") or {}
    if not isinstance(settings, dict):
        raise ValueError(f"settings must be an object, got {type(settings).__name__}")
    if settings.get("review"):
        raise ValueError(NEEDS_THREAD)
    context = build_context(spec.name, **settings)
    for name in _REQUIRED[spec.input_kind]:
        if name not in arguments:
            raise ValueError(f"{spec.name} needs {name!r}: {_FIELDS[name]['description']}")
    if spec.input_kind == "answer":
        payload: dict[str, Any] = {
            "question": clean_claim(arguments["question"], context.max_claim_chars),
            "answer": clean_claim(arguments["answer"], 20 * context.max_claim_chars),
        }
        references = arguments.get("references") or []
        if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
            raise ValueError("references must be a list of texts")
        if references:
            payload["references"] = references
        return payload, settings
    text = arguments[_REQUIRED[spec.input_kind][0]]
    given = arguments.get(spec.given) if spec.given else None
    documents = given_documents(given) if given is not None else None
    return make_input(spec, text, context, documents), settings


async def run_tool(ctx: ServerRequestContext[Any], spec: MethodSpec, args: dict[str, Any]) -> Any:
    """Start the run, report each finished step, and answer with its result contract."""
    try:
        payload, settings = await asyncio.to_thread(run_input, spec, args)
    except ValueError as exc:
        return refusal(exc)

    async def progress(step: int, words: str) -> None:
        await ctx.session.report_progress(step, None, words)

    try:
        result = await run_served(spec.name, payload, settings, progress)
    except RunError as exc:
        return refusal(exc)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result_text(result))],
        structured_content=result,
    )


def server(names: tuple[str, ...] | None = None) -> Server[Any]:
    """The MCP server: ``names`` (default ``tool_names()``) as tools."""
    specs = {name: METHODS[name] for name in (names or tool_names())}
    tools = [tool(spec) for spec in specs.values()]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = specs.get(params.name)
        if spec is None:
            return refusal(
                f"unknown tool {params.name!r}: this server's tools are {', '.join(specs)} "
                f"({TOOLS_ENV} lists others)"
            )
        result: types.CallToolResult = await run_tool(ctx, spec, dict(params.arguments or {}))
        return result

    return Server(
        "factdebate",
        instructions=(
            "Each tool checks a claim, a question or a long answer with one factdebate method; "
            "calls of the debate methods run for minutes and report progress as they go."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class Endpoint:
    """The ``/mcp`` route's ASGI app and the lifespan that runs its session manager."""

    def __init__(self, names: tuple[str, ...] | None = None) -> None:
        """Build the MCP server and its streamable-HTTP manager (stateless, SSE answers)."""
        self.manager = StreamableHTTPSessionManager(app=server(names), stateless=True)
        self.app = StreamableHTTPASGIApp(self.manager)

    @asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        """Run the session manager while the server runs."""
        async with self.manager.run():
            yield
