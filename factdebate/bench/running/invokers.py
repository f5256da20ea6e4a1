"""How a bench item runs: in process, in process with a checkpoint database, or on a server.

Each invoker takes ``(graph input, settings, item id)`` and returns the graph's output state. The
server invoker turns a server that is gone or that refuses the run's settings into
``ServerError``, which stops the whole bench (finished items stay in results.jsonl; the same
command resumes) instead of failing every remaining item one by one.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from factdebate.tools.core.errors import FactDebateError

Invoker = Callable[[dict[str, Any], Any, str], Awaitable[dict[str, Any]]]
SERVER_TIMEOUT_S = 3600.0  # one run on the server: a long debate on a slow model fits
REFUSALS = (401, 403, 404, 409, 422)  # answers that every other item would get too
ASSISTANT_NAMESPACE = uuid.UUID("2f7e0a52-3c1d-4a8e-9b6f-5d4c3b2a1908")


class ServerError(FactDebateError, ValueError):
    """The LangGraph server cannot take the bench's runs: unreachable, or it refused them.

    A ValueError like every other refusal of a run's settings, so callers (the CLI) show it
    as one line.
    """


def local_invoker(graph: Any) -> Invoker:
    """Run each item in this process on ``graph`` (no checkpoints)."""

    async def invoke(payload: dict[str, Any], context: Any, item_id: str) -> dict[str, Any]:
        out: dict[str, Any] = await graph.ainvoke(payload, context=context)
        return out

    return invoke


def run_id_of(run_key: str) -> str:
    """A bench run's id (stable across resumes of the same run folder)."""
    return f"bench-{hashlib.sha256(run_key.encode('utf-8')).hexdigest()[:16]}"


def thread_of(run_key: str, item_id: str) -> str:
    """The checkpoint thread id of one bench item (stable across resumes of the same run)."""
    return f"{run_id_of(run_key)}-{item_id}"


def durable_invoker(graph: Any, checkpoint: str, run_key: str) -> Invoker:
    """Run each item in this process, saving every finished step under its own thread.

    An item interrupted mid-debate resumes from its last saved step when the bench is run
    again; a finished one returns its stored output without any model call.
    """
    from factdebate.api import output_keys
    from factdebate.runs.checkpoints import open_checkpointer

    builder = graph.builder
    keys = output_keys(builder)

    async def invoke(payload: dict[str, Any], context: Any, item_id: str) -> dict[str, Any]:
        thread = thread_of(run_key, item_id)
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
        async with open_checkpointer(checkpoint) as saver:
            durable = builder.compile(checkpointer=saver, name=getattr(graph, "name", None))
            snapshot = await durable.aget_state(config)
            if snapshot.values and not snapshot.next:
                return {k: v for k, v in dict(snapshot.values).items() if not keys or k in keys}
            resume = bool(snapshot.values) and bool(snapshot.next)
            out: dict[str, Any] = await durable.ainvoke(
                None if resume else payload, config=config, context=context, durability="sync"
            )
            return out

    return invoke


def assistant_id_of(url: str, method: str, settings: dict[str, Any]) -> str:
    """A deterministic assistant id for ``method`` with these settings on this server."""
    key = json.dumps([url.rstrip("/"), method, settings], sort_keys=True, default=str)
    return str(uuid.uuid5(ASSISTANT_NAMESPACE, key))


def _status_of(exc: BaseException) -> tuple[int, str] | None:
    """The HTTP status and the server's ``detail`` of an SDK error, if it is an HTTP answer."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    try:
        body = response.json() if response is not None else None
    except Exception:  # not JSON: fall back to the text
        body = None
    detail = body.get("detail") if isinstance(body, dict) else None
    if detail is None:
        detail = getattr(response, "text", "") or str(exc)
    return status, " ".join(str(detail).split())[:500]


def _unreachable(exc: BaseException) -> bool:
    import httpx
    from langgraph_sdk.errors import APIConnectionError

    gone = (httpx.TransportError, APIConnectionError, ConnectionError, TimeoutError)
    return isinstance(exc, gone)


async def server_invoker(
    url: str, method: str, settings: dict[str, Any], queue: tuple[str, str] | None = None
) -> Invoker:
    """Check the server takes ``method`` with ``settings``, then send each item as a run.

    The server's own check of the settings counts (it may run another version than this
    client): it is asked once before any item, by creating the run's assistant (an id fixed
    by the settings, so a resumed bench finds the one it made; Studio lists it). Each item
    then runs on ``method`` with the settings as its context (checked by the server again).

    With ``queue`` (the bench run's id and dataset) each item runs on a thread of its own
    whose metadata names the run, the item and the dataset (``queue_metadata``), so an item
    paused for review stays there as an interrupted thread; a resumed bench takes an item's
    thread as it is (paused or finished) instead of running it again.

    Raises:
        ServerError: the server cannot be reached, has no such graph, or refuses the settings.
    """
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=SERVER_TIMEOUT_S)
    assistant_id = assistant_id_of(url, method, settings)
    try:
        await client.assistants.create(
            method,
            context=settings or None,
            assistant_id=assistant_id,
            if_exists="do_nothing",
            name=f"bench {method} {assistant_id[:8]}",
        )
    except Exception as exc:
        raise _server_error(url, exc) from exc

    async def invoke(payload: dict[str, Any], context: Any, item_id: str) -> dict[str, Any]:
        try:
            thread, stored = await _queue_thread(client, method, queue, item_id)
            out = stored or await client.runs.wait(
                thread, method, input=payload, context=settings or None
            )
        except Exception as exc:
            answered = _status_of(exc)
            if _unreachable(exc) or (answered is not None and answered[0] in REFUSALS):
                raise _server_error(url, exc) from exc
            raise
        if not isinstance(out, dict):
            raise RuntimeError(f"unexpected server answer: {str(out)[:200]}")
        if "__error__" in out:
            raise RuntimeError(f"server run failed: {out['__error__']}")
        return out

    return invoke


async def _queue_thread(
    client: Any, method: str, queue: tuple[str, str] | None, item_id: str
) -> tuple[str | None, dict[str, Any] | None]:
    """The item's queue thread (None: no queue) and its output when it ran before."""
    if queue is None:
        return None, None
    from factdebate.review.server_queue import queue_metadata, queue_thread_id

    run_id, dataset = queue
    thread_id = queue_thread_id(run_id, item_id)
    metadata = queue_metadata(run_id, item_id, dataset, method)
    thread = await client.threads.create(
        thread_id=thread_id, metadata=metadata, if_exists="do_nothing"
    )
    values = dict(thread.get("values") or {})
    finished = thread.get("status") == "idle" and values.get("verdict") is not None
    if thread.get("status") != "interrupted" and not finished:
        return thread_id, None
    if thread["status"] == "interrupted":
        values["__interrupt__"] = [
            item for items in (thread.get("interrupts") or {}).values() for item in items
        ] or [True]
    return thread_id, values


def _server_error(url: str, exc: BaseException) -> ServerError:
    """One line naming the server and what went wrong (its own words for an HTTP answer)."""
    answered = _status_of(exc)
    if answered is not None:
        status, detail = answered
        return ServerError(f"server {url} answered {status}: {detail}")
    if _unreachable(exc):
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return ServerError(f"server {url} cannot be reached ({reason[:200]})")
    return ServerError(f"server {url}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
