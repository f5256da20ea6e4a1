"""History and replay of stored debates: list a thread's steps, fork it at one and run on."""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator
from typing import Any

from factdebate.api import METHOD_KEY, build_context, stream_events
from factdebate.graphs.registry import load_method
from factdebate.nodes.review import ReviewError
from factdebate.review.resume import thread_method
from factdebate.runs.checkpoints import open_checkpointer
from factdebate.tools.core.secrets import redact_deep

REPLAY_KEY = "factdebate_replay"
"""Checkpoint metadata of a fork's first step: where it was forked from."""
_START = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,80})(?:@([0-9]{1,3}))?")
_THREAD = re.compile(r"[A-Za-z0-9_.:~@-]{1,200}")


def parse_start(start: str) -> tuple[str, int | None]:
    """``NODE`` or ``NODE@ROUND`` -> (node, round or None).

    Raises:
        ValueError: anything else.
    """
    match = _START.fullmatch(start.strip())
    if match is None:
        raise ReviewError(
            f"--from {start!r}: expected NODE or NODE@ROUND, e.g. judge or argue_rag@2"
        )
    return match[1], int(match[2]) if match[2] else None


def _step(snapshot: Any) -> dict[str, Any]:
    """One stored step as a row: its number, what runs next, the round and verdict so far."""
    values = snapshot.values or {}
    metadata = snapshot.metadata or {}
    row = {
        "step": metadata.get("step"),
        "checkpoint": snapshot.config["configurable"]["checkpoint_id"],
        "next": list(snapshot.next),
        "round": values.get("round"),
        "verdict": values.get("verdict"),
        "created_at": snapshot.created_at,
    }
    if metadata.get(REPLAY_KEY):
        row["replay"] = metadata[REPLAY_KEY]
    return row


async def _snapshots(durable: Any, thread: str) -> list[Any]:
    """Every top-level step of ``thread``, oldest first."""
    config = {"configurable": {"thread_id": thread}}
    return [s async for s in durable.aget_state_history(config)][::-1]


async def ahistory(
    thread: str, *, checkpoint: str, method: str | None = None
) -> list[dict[str, Any]]:
    """The stored steps of ``thread``, oldest first (``factdebate history``).

    Raises:
        ValueError: an unknown thread or a bad checkpoint spec.
    """
    async with open_checkpointer(checkpoint, existing=True) as saver:
        name = await thread_method(saver, thread, method)
        graph, _ = load_method(name)
        durable = graph.builder.compile(checkpointer=saver, name=name)
        return [_step(s) for s in await _snapshots(durable, thread)]


def _pick(steps: list[Any], node: str, round_no: int | None, thread: str) -> Any:
    """The first stored step at which ``node`` (of round ``round_no``) was about to run."""
    hits = [s for s in steps if node in s.next]
    if round_no is not None:
        hits = [s for s in hits if (s.values or {}).get("round") == round_no]
    if not hits:
        known = sorted({n for s in steps for n in s.next})
        where = f"{node}@{round_no}" if round_no is not None else node
        raise ReviewError(
            f"thread {thread!r} has no step {where}; its steps run: {', '.join(known) or 'none'}"
        )
    rounds = sorted({r for s in hits if isinstance(r := (s.values or {}).get("round"), int)})
    if round_no is None and len(rounds) > 1:
        listed = ", ".join(f"{node}@{r}" for r in rounds)
        raise ReviewError(f"{node} runs in several rounds of thread {thread!r}: say {listed}")
    return hits[0]


async def _copy_until(
    saver: Any, thread: str, checkpoint_id: str, new: str, mark: dict[str, Any]
) -> None:
    """Copy the chain of checkpoints ending at ``checkpoint_id`` into thread ``new``.

    Pending writes are not copied, so everything after the fork point runs again.
    """
    chain: list[Any] = []
    config: dict[str, Any] | None = {
        "configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}
    }
    while config is not None:
        item = await saver.aget_tuple(config)
        if item is None:
            break
        chain.append(item)
        config = item.parent_config
    parent: str | None = None
    for item in reversed(chain):
        metadata = dict(item.metadata or {})
        if item.checkpoint["id"] == checkpoint_id:
            metadata[REPLAY_KEY] = mark
        target: dict[str, Any] = {"configurable": {"thread_id": new, "checkpoint_ns": ""}}
        if parent is not None:
            target["configurable"]["checkpoint_id"] = parent
        versions = dict(item.checkpoint.get("channel_versions") or {})
        await saver.aput(target, item.checkpoint, metadata, versions)
        parent = item.checkpoint["id"]


async def astream_replay(
    thread: str,
    start: str,
    *,
    checkpoint: str,
    new_thread: str | None = None,
    method: str | None = None,
    **settings: Any,
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Fork ``thread`` where ``start`` (``NODE[@ROUND]``) was about to run; run the fork on.

    ``settings`` are the fork's (another judge model, threshold, round limit...); the stored
    debate is left as it was. Yields ``("replay", record)`` first, then the node updates, then
    ``("result", contract)`` whose ``replay`` key names the parent thread and step (or
    ``("awaiting_review", ...)`` when the fork's settings ask for review). The contract's
    ``cost`` is the fork's own (the calls made after the fork point); ``replay.parent_cost``
    is what the parent had spent up to that point.

    Raises:
        ValueError: a bad ``start``, an unknown thread or step, or a fork thread in use.
    """
    node, round_no = parse_start(start)
    async with open_checkpointer(checkpoint, existing=True) as saver:
        name = await thread_method(saver, thread, method)
        graph, _ = load_method(name)
        context = build_context(name, **settings)
        durable = graph.builder.compile(checkpointer=saver, name=name)
        fork_point = _pick(await _snapshots(durable, thread), node, round_no, thread)
        new = new_thread or f"{thread}~{node}{'' if round_no is None else f'@{round_no}'}"
        if new_thread is None:
            new += f"~{secrets.token_hex(3)}"
        if _THREAD.fullmatch(new) is None:
            raise ReviewError(f"bad thread name {new!r}: letters, digits and _.:~@- only")
        if await saver.aget_tuple({"configurable": {"thread_id": new}}) is not None:
            raise ReviewError(f"thread {new!r} already exists: choose another --to")
        step = (fork_point.metadata or {}).get("step")
        record = {
            "parent_thread": thread,
            "parent_checkpoint": fork_point.config["configurable"]["checkpoint_id"],
            "parent_step": step,
            "from": start,
            "thread": new,
            "settings": dict(redact_deep(settings)),
        }
        await _copy_until(saver, thread, record["parent_checkpoint"], new, record)
        yield "replay", record
        config = {"configurable": {"thread_id": new}, "metadata": {METHOD_KEY: name}}
        parent_cost = dict((fork_point.values or {}).get("cost") or {})
        async for event, data in stream_events(
            durable, None, context, config=config, durability="sync"
        ):
            if event == "result":  # the fork's own cost; the parent's up to the fork apart
                own = cost_since(data.get("cost") or {}, parent_cost)
                data = {**data, "cost": own, "replay": {**record, "parent_cost": parent_cost}}
            yield event, data


def cost_since(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """Per-role usage in ``after`` less ``before`` (what ran since): roles left at zero dropped."""
    own: dict[str, Any] = {}
    for role, usage in after.items():
        was = before.get(role) or {}
        left = {k: int(v) - int(was.get(k, 0)) for k, v in dict(usage).items()}
        if role == "total" or any(left.values()):
            own[role] = left
    return own


async def areplay(
    thread: str,
    start: str,
    *,
    checkpoint: str,
    new_thread: str | None = None,
    method: str | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Fork and run on (``astream_replay``); returns the fork's result contract."""
    result: dict[str, Any] = {}
    record: dict[str, Any] = {}
    async for event, data in astream_replay(
        thread, start, checkpoint=checkpoint, new_thread=new_thread, method=method, **settings
    ):
        if event == "replay":
            record = data
        elif event == "result":
            result = data
        elif event == "awaiting_review":
            return {"status": "awaiting_review", "thread": record["thread"], "proposed": data}
    return result
