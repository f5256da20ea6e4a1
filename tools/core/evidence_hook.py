"""The one door retrieval and search calls pass: a hook that records them or answers them frozen."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import Evidence


@dataclass(frozen=True)
class EvidenceCall:
    """One retrieval or search call as sent, with the item and agent it was made for.

    Attributes:
        tool: ``rag`` or ``search``.
        backend: ``dense``, ``hybrid``, ``tavily``, ``serper``, ``openalex``, ``offline``
            (BM25 over the local collection) or ``custom`` (a Python override).
        query: The query as the agent wrote it.
        k: How many documents were asked for.
        collection: The local index the call reads (web search names it too: ``offline``
            falls back to it).
        item: The bench item's id, or the verify thread ("" when there is none).
        claim: The item's text ("" when unknown).
        agent: The agent that asked.
        options: JSON text of what else shapes the answer (reranker, encoder).
    """

    tool: str
    backend: str
    query: str
    k: int
    collection: str = ""
    item: str = ""
    claim: str = ""
    agent: str = ""
    options: str = ""


class LiveAnswer(NamedTuple):
    """What the real tool returned, the index generation it read and that index's encoder.

    Both are "" for the web; the encoder ranks an item's pool for a new query on replay.
    """

    docs: list[Evidence]
    generation: str
    encoder: str = ""


class EvidenceHook(Protocol):
    """Answers a call: by running it live (and recording it) or from frozen evidence.

    ``serve`` runs in the tool's worker thread, so an implementation must be thread-safe.
    """

    def serve(self, call: EvidenceCall, live: Callable[[], LiveAnswer]) -> list[Evidence]:
        """The documents for ``call``; ``live()`` runs the real tool."""
        ...


class EvidenceMissError(FactDebateError, RuntimeError):
    """A replayed call the frozen evidence does not hold: the item stops, nothing else."""


class _Item(NamedTuple):
    id: str
    claim: str


_hook: contextvars.ContextVar[EvidenceHook | None] = contextvars.ContextVar(
    "factdebate_evidence_hook", default=None
)
_item: contextvars.ContextVar[_Item | None] = contextvars.ContextVar(
    "factdebate_evidence_item", default=None
)


FrozenOpener = Callable[[str, str, str], EvidenceHook]
"""Opens frozen evidence for a run with no hook installed: ``(source, scope, miss)``."""
_opener: list[FrozenOpener] = []


def current_hook() -> EvidenceHook | None:
    """The hook installed for the running task, if any."""
    return _hook.get()


def serve_frozen_with(opener: FrozenOpener) -> None:
    """Let runs with no hook installed (a server's) read the frozen evidence they name."""
    _opener[:] = [opener]


def frozen_hook(source: str, scope: str, miss: str) -> EvidenceHook | None:
    """The hook answering from ``source`` for a run with none installed; None: none serves."""
    return _opener[0](source, scope, miss) if _opener else None


def current_item() -> tuple[str, str]:
    """``(item id, claim text)`` of the running task ("" each when none was set)."""
    item = _item.get()
    return ("", "") if item is None else (item.id, item.claim)


@contextmanager
def use_hook(hook: EvidenceHook | None) -> Iterator[None]:
    """Answer every call made inside the block (and in tasks it starts) through ``hook``."""
    token = _hook.set(hook)
    try:
        yield
    finally:
        _hook.reset(token)


@contextmanager
def item_scope(item_id: str, claim: str = "") -> Iterator[None]:
    """Mark every call made inside the block as made for this item."""
    token = _item.set(_Item(str(item_id), claim))
    try:
        yield
    finally:
        _item.reset(token)


def normalise_query(query: str) -> str:
    """A query as replay compares it: whitespace collapsed, case folded."""
    return " ".join(query.split()).casefold()
