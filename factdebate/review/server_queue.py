"""A bench run's review queue on a LangGraph server: its paused threads, listed and decided."""

from __future__ import annotations

from typing import Any

from factdebate.nodes.review import ReviewError, is_review, proposal

QUEUE_RUN, QUEUE_ITEM, QUEUE_DATASET = "bench_run", "bench_item", "bench_dataset"
"""Metadata keys of a server thread in a bench run's review queue (an inbox filters on them)."""
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
            if request is None:
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


async def adecided(url: str, run_id: str) -> dict[str, dict[str, Any]]:
    """The values of bench run ``run_id``'s threads whose review is decided, by item id."""
    client = _client(url)
    found: dict[str, dict[str, Any]] = {}
    offset = 0
    while True:
        page = await client.threads.search(
            metadata={QUEUE_RUN: run_id}, status="idle", limit=PAGE, offset=offset
        )
        for thread in page:
            values = dict(thread.get("values") or {})
            if (values.get("review") or {}).get("status"):
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


__all__ = ["adecide", "adecided", "alist_queue", "queue_metadata", "waiting_request"]
