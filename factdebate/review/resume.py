"""Human review through the API: see a run awaiting review, approve it or overrule it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from langgraph.types import Command

from factdebate.api import METHOD_KEY, build_context, stream_events
from factdebate.graphs.registry import METHODS, load_method, resolve
from factdebate.nodes.review import ReviewError, check_decision, pending_review
from factdebate.runs.checkpoints import claim_checkpoint, open_checkpointer, release_checkpoint

DECIDE = "review-decision"
"""The purpose under which a paused checkpoint is claimed by the one caller that decides it."""


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

    Exactly one caller decides a paused thread: the decision claims the paused checkpoint
    in the checkpoint database (a compare-and-set every process sees), and a caller that
    finds it claimed is refused with "already decided".

    Raises:
        ValueError: an unknown thread, a thread not awaiting review, one another caller
            already decided, or a decision that does not fit (a verdict outside the method's
            labels, both or neither of approve and verdict). Nothing is changed in those cases.
    """
    async with open_checkpointer(checkpoint, existing=True) as saver:
        name = await thread_method(saver, thread, method)
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
        paused_at = str(snapshot.config["configurable"]["checkpoint_id"])
        if not await claim_checkpoint(saver, thread, paused_at, DECIDE):
            raise ReviewError(
                f"thread {thread!r} is not awaiting review: it is already decided (by another "
                "reviewer at this moment; nothing changed)"
            )
        applied = False
        try:
            async for event in stream_events(
                durable, Command(resume=decision), context, config=config, durability="sync"
            ):
                applied = True
                yield event
        except BaseException:
            if not applied:  # nothing reached the thread: another decision may still be made
                await release_checkpoint(saver, thread, paused_at, DECIDE)
            raise


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
