"""Human review through the API: see a run awaiting review, approve it or overrule it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from langgraph.types import Command

from factdebate.api import METHOD_KEY, build_context, stream_events
from factdebate.graphs.registry import METHODS, load_method, resolve
from factdebate.nodes.review import ReviewError, check_decision, pending_review
from factdebate.runs.checkpoints import ThreadBusyError, open_checkpointer, thread_lease


async def stored_method(saver: Any, thread: str) -> str | None:
    """The method a stored thread was run with (checkpoint metadata), or None."""
    async with aclosing(saver.alist({"configurable": {"thread_id": thread}}, limit=50)) as items:
        async for item in items:  # closed before the saver's connection, even on an early return
            name = (item.metadata or {}).get(METHOD_KEY)
            if isinstance(name, str) and name in METHODS:
                return name
    return None


def stored_method_sync(thread: str, checkpoint: str) -> str:
    """The method stored with ``thread`` (for commands that check settings before running).

    Raises:
        ValueError: an unknown thread, or one that does not record its method.
    """

    async def find() -> str:
        async with open_checkpointer(checkpoint, existing=True) as saver:
            return await thread_method(saver, thread, None)

    return asyncio.run(find())


async def thread_method(saver: Any, thread: str, method: str | None) -> str:
    """``method`` if given (it must be the stored one, where one is stored), else the stored one.

    Raises:
        ValueError: an unknown thread, a thread whose method is not recorded (give it), or a
            given method other than the one the thread was run with.
    """
    found = await stored_method(saver, thread)
    if method is not None:
        name = resolve(method).name  # an unknown name raises its one-line error
        if found is not None and found != name:
            raise ReviewError(
                f"thread {thread!r} was run with method {found}, not {name}: "
                f"give --method {found} or leave --method out"
            )
        return method
    if found is None:
        if await saver.aget_tuple({"configurable": {"thread_id": thread}}) is None:
            raise ReviewError(f"unknown thread {thread!r}: nothing is stored under it")
        raise ReviewError(f"thread {thread!r} does not record its method: pass --method")
    return found


async def astream_resume(
    thread: str,
    *,
    checkpoint: str,
    approve: bool = False,
    verdict: str | None = None,
    note: str = "",
    method: str | None = None,
    **settings: Any,
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Apply a review decision to a thread awaiting review; yield updates, then the result.

    Exactly one caller decides a paused thread. The decision holds the thread's run lease
    (``thread_lease``: a lock the checkpoint database or the OS gives back when its holder
    ends, however it ends) while it reads the thread and applies the decision, so a caller
    that finds the lease held is refused with "already decided", and one that comes after a
    decided thread finds it no longer waiting. A resume that fails, or whose process dies,
    before its decision reached the thread leaves the thread waiting, free to decide later.

    Raises:
        ValueError: an unknown thread, a thread not awaiting review, one another caller
            already decided (or is deciding), or a decision that does not fit (a verdict
            outside the method's labels, both or neither of approve and verdict). Nothing is
            changed in those cases.
    """
    async with (
        open_checkpointer(checkpoint, existing=True) as saver,
        contextlib.AsyncExitStack() as held,
    ):
        name = await thread_method(saver, thread, method)
        try:
            await held.enter_async_context(thread_lease(saver, checkpoint, thread))
        except ThreadBusyError:
            raise ReviewError(
                f"thread {thread!r} is not awaiting review: it is already decided (another "
                "reviewer is deciding it at this moment; nothing changed)"
            ) from None
        graph, _ = load_method(name)
        context = build_context(name, **{**settings, "review": True})
        durable = graph.builder.compile(checkpointer=saver, name=name)
        config: dict[str, Any] = {
            "configurable": {"thread_id": thread},
            "metadata": {METHOD_KEY: name},
        }
        snapshot = await durable.aget_state(config)
        if not snapshot.values:
            raise ReviewError(f"unknown thread {thread!r}: nothing is stored under it")
        request = pending_review(snapshot)
        if request is None:
            status = "finished" if not snapshot.next else "still running (resume it first)"
            review = snapshot.values.get("review")
            if not snapshot.next and isinstance(review, dict) and review.get("status"):
                status = f"already decided ({review['status']})"
            raise ReviewError(f"thread {thread!r} is not awaiting review: it is {status}")
        decision = check_decision(
            {"approve": True, "note": note} if approve else {"verdict": verdict, "note": note},
            tuple(request["choices"]) if request.get("choices") is not None else None,
        )
        async for event in stream_events(
            durable, Command(resume=decision), context, config=config, durability="sync"
        ):
            yield event


async def aresume(
    thread: str,
    *,
    checkpoint: str,
    approve: bool = False,
    verdict: str | None = None,
    note: str = "",
    method: str | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Finish a run awaiting review: ``approve=True`` or ``verdict=...`` (with a ``note``).

    Returns the result contract, whose ``review`` records the decision.
    """
    result: dict[str, Any] = {}
    async for node, update in astream_resume(
        thread,
        checkpoint=checkpoint,
        approve=approve,
        verdict=verdict,
        note=note,
        method=method,
        **settings,
    ):
        if node == "result":
            result = update
    return result


__all__ = ["ReviewError", "aresume", "astream_resume"]
