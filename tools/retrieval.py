"""Dispatch a debater's tool ('rag', 'search', 'none') to its backend, with a timeout."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tools.index import ensure_index
from tools.records import Evidence
from tools.search import search_backend
from tools.vectorstore import dense_search

ToolFn = Callable[[str, int], list[Evidence]]
_overrides: dict[str, ToolFn] = {}


def override_tool(name: str, fn: ToolFn | None) -> None:
    """Replace the backend behind a tool name; ``None`` restores the built-in one.

    Used for custom retrievers from Python and for fault-injection tests.
    """
    if fn is None:
        _overrides.pop(name, None)
    else:
        _overrides[name] = fn


def _run(
    tool: str, query: str, k: int, collection: str, milvus_uri: str, backend: str
) -> list[Evidence]:
    if tool in _overrides:
        return _overrides[tool](query, k)
    if tool == "none":
        return []
    if tool == "rag":
        ensure_index(collection, milvus_uri)
        return dense_search(collection, query, k, milvus_uri)
    if tool == "search":
        engine = search_backend(backend, collection)
        if engine.name == "bm25":
            ensure_index(collection, milvus_uri)
        return engine.search(query, k)
    raise ValueError(f"unknown tool {tool!r}: expected rag, search or none")


async def retrieve(
    tool: str,
    query: str,
    *,
    k: int,
    collection: str,
    milvus_uri: str = "",
    search_backend_name: str = "auto",
    timeout: float = 60.0,
) -> list[Evidence]:
    """Run one retrieval off the event loop; raises on failure or timeout (callers record it)."""
    return await asyncio.wait_for(
        asyncio.to_thread(_run, tool, query, k, collection, milvus_uri, search_backend_name),
        timeout=timeout,
    )
