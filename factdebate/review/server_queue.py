"""A bench run's review queue on a LangGraph server: its paused threads, listed and decided."""

from __future__ import annotations

import uuid
from typing import Any

from factdebate.nodes.review import ReviewError, is_review, proposal

QUEUE_RUN, QUEUE_ITEM, QUEUE_DATASET = "bench_run", "bench_item", "bench_dataset"
"""Metadata keys of a server thread in a bench run's review queue (an inbox filters on them)."""
QUEUE_THREADS = uuid.UUID("2f7e0a52-3c1d-4a8e-9b6f-5d4c3b2a1908")
"""The namespace of a queue item's thread id (the bench's own: older runs keep their ids)."""
DECIDED = ("approved", "overruled")
PAGE = 100
TIMEOUT_S = 3600.0  # a decision runs the rest of the graph (the review step, then the end)


def queue_metadata(run_id: str, item_id: str, dataset: str, method: str) -> dict[str, str]:
    """The metadata of one bench item's thread on a server (``factdebate_method``: the API's)."""
    return {
        QUEUE_RUN: run_id,
        QUEUE_ITEM: item_id,
        QUEUE_DATASET: dataset,
        "factdebate_method": method,
    }


def queue_thread_id(run_id: str, item_id: str) -> str:
    """The id of the thread a bench run creates for one item: fixed by the run and the item."""
    return str(uuid.uuid5(QUEUE_THREADS, f"{run_id}/{item_id}"))


def own_thread(thread: dict[str, Any], run_id: str) -> bool:
    """Whether a server thread is the one the run ``run_id`` created for the item it names.

    Metadata is the client's to write; a thread's id is fixed by the run id and the item id,
    so a thread made by anyone else under the run's metadata is not the run's.
    """
    meta = thread.get("metadata") or {}
    if meta.get(QUEUE_RUN) != run_id or meta.get(QUEUE_ITEM) is None:
        return False
    return str(thread.get("thread_id")) == queue_thread_id(run_id, str(meta[QUEUE_ITEM]))


def server_decided(values: dict[str, Any], checkpoint_metadata: Any) -> bool:
    """Whether a thread's decided review was written by its review step in a server run.

    The server writes a checkpoint's ``source`` ("loop" for a step of a run, "update" for a
    state write) and the identity it authenticated (``langgraph_auth_user_id``, a key no
    request sets); the review step records that identity as ``review.by``. A decision that
    is not the last step of a run, or names someone else, was not made by a decision.
    """
    review = values.get("review") if isinstance(values, dict) else None
    if not isinstance(review, dict) or review.get("status") not in DECIDED:
        return False
    if not isinstance(checkpoint_metadata, dict) or checkpoint_metadata.get("source") != "loop":
        return False
    by = checkpoint_metadata.get("langgraph_auth_user_id") or "local"
    return bool(review.get("by")) and review.get("by") == by


def _client(url: str) -> Any:
    from langgraph_sdk import get_client

    return get_client(url=url, timeout=TIMEOUT_S)


def waiting_request(thread: dict[str, Any]) -> dict[str, Any] | None:
    """The review request a server thread (search or get JSON) waits on, or None."""
    for items in (thread.get("interrupts") or {}).values():
        for item in items or []:
            value = item.get("value") if isinstance(item, dict) else None
            if isinstance(value, dict) and is_review(value):
                return dict(value)
    return None


async def alist_queue(url: str, run_id: str) -> list[dict[str, Any]]:
    """The threads of bench run ``run_id`` waiting for review on the server, by item id.

    Each entry: ``thread``, ``item``, ``dataset``, ``method``, ``input`` (the claim or
    question) and ``proposed`` (what a reviewer is shown).
    """
    client = _client(url)
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = await client.threads.search(
            metadata={QUEUE_RUN: run_id}, status="interrupted", limit=PAGE, offset=offset
        )
        for thread in page:
            request = waiting_request(thread)
            if request is None or not own_thread(thread, run_id):
                continue
            meta = thread.get("metadata") or {}
            values = dict(thread.get("values") or {})
            found.append(
                {
                    "thread": thread["thread_id"],
                    "item": str(meta.get(QUEUE_ITEM)),
                    "dataset": meta.get(QUEUE_DATASET),
                    "method": meta.get("graph_id") or meta.get("factdebate_method"),
                    "input": values.get("claim") or values.get("question") or "",
                    "proposed": proposal(request, values),
                }
            )
        if len(page) < PAGE:
            return sorted(found, key=lambda entry: entry["item"])
        offset += PAGE


async def aended(url: str, run_id: str) -> list[dict[str, Any]]:
    """The run's own threads that wait for no review and hold no decision, by item id.

    A thread whose run failed, or whose review ended some other way (a server without
    factdebate's middleware took new input on it), is no longer in the queue: each entry
    (``thread``, ``item``, ``status``) says so instead of leaving the item pending forever.
    """
    client = _client(url)
    found: list[dict[str, Any]] = []
    for status in ("idle", "error"):
        offset = 0
        while True:
            page = await client.threads.search(
                metadata={QUEUE_RUN: run_id}, status=status, limit=PAGE, offset=offset
            )
            for thread in page:
                review = (thread.get("values") or {}).get("review") or {}
                if own_thread(thread, run_id) and review.get("status") not in DECIDED:
                    item = str((thread.get("metadata") or {}).get(QUEUE_ITEM))
                    found.append({"thread": thread["thread_id"], "item": item, "status": status})
            if len(page) < PAGE:
                break
            offset += PAGE
    return sorted(found, key=lambda entry: entry["item"])


async def adecided(url: str, run_id: str) -> dict[str, dict[str, Any]]:
    """The values of bench run ``run_id``'s threads whose review is decided, by item id.

    Only the threads the run created (``own_thread``) whose decision the server recorded as
    the last step of a run (``server_decided``) count; any other thread under the run's
    metadata is left out.
    """
    client = _client(url)
    found: dict[str, dict[str, Any]] = {}
    offset = 0
    while True:
        page = await client.threads.search(
            metadata={QUEUE_RUN: run_id}, status="idle", limit=PAGE, offset=offset
        )
        for thread in page:
            values = dict(thread.get("values") or {})
            if (values.get("review") or {}).get("status") not in DECIDED:
                continue
            if not own_thread(thread, run_id):
                continue
            last = await client.threads.get_history(thread["thread_id"], limit=1)
            if last and server_decided(values, last[0].get("metadata")):
                found[str((thread.get("metadata") or {}).get(QUEUE_ITEM))] = values
        if len(page) < PAGE:
            return found
        offset += PAGE


async def adecide(url: str, thread: str, decision: dict[str, Any]) -> dict[str, Any]:
    """Resume a server thread waiting for review with ``decision``; its values after it.

    The server (with factdebate's ``http.app``) refuses a decision that does not fit (422)
    or a thread already decided (409); both come back as one line, nothing changed.

    Raises:
        ReviewError: the thread is not waiting for review, or the server refused the decision.
    """
    client = _client(url)
    found = await client.threads.get(thread)
    meta = found.get("metadata") or {}
    method = meta.get("graph_id") or meta.get("factdebate_method")
    if found.get("status") != "interrupted" or waiting_request(found) is None or not method:
        raise ReviewError(f"thread {thread!r} is not awaiting review: it is already decided")
    try:
        values = await client.runs.wait(thread, method, command={"resume": decision})
    except Exception as exc:  # the SDK's HTTP error: the server's own one line
        response: Any = getattr(exc, "response", None)
        if not isinstance(getattr(response, "status_code", None), int):
            raise
        try:
            detail = response.json().get("detail")
        except ValueError:
            detail = response.text
        raise ReviewError(f"thread {thread!r}: " + " ".join(str(detail).split())[:300]) from None
    if isinstance(values, dict) and values.get("__interrupt__"):
        pending = next(
            (
                i.get("value")
                for i in values["__interrupt__"]
                if isinstance(i, dict) and is_review(i.get("value"))
            ),
            None,
        )
        why = pending.get("refused") if isinstance(pending, dict) else None
        raise ReviewError(f"thread {thread!r} still awaits review: {why or 'not decided'}")
    return dict(values) if isinstance(values, dict) else {}


__all__ = [
    "adecide",
    "adecided",
    "aended",
    "alist_queue",
    "queue_metadata",
    "queue_thread_id",
    "server_decided",
    "waiting_request",
]
