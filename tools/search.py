"""Search backends with one result shape: Tavily web search, or stemmed BM25 over a collection."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from tools.manifest import (
    BM25_B,
    BM25_K1,
    BM25_METHOD,
    IndexMismatchError,
    Manifest,
    bm25_dir,
    corpus_hash,
    live_manifest,
)
from tools.ranking import Passage, best_per_document
from tools.records import Evidence

_lock = threading.Lock()
TITLE_WEIGHT = 0.5  # title field's BM25 weight next to the text's (tuned on SciFact train)
FETCH_DOCS = 100  # documents each engine hands to fusion


class SearchBackend(Protocol):
    """Anything that turns a query into ranked evidence."""

    name: str

    def search(self, query: str, k: int) -> list[Evidence]:
        """Return at most ``k`` documents, best first."""
        ...


@cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-case word tokens without English stopwords, Snowball-stemmed (the one analyzer)."""
    import bm25s

    tokens: list[list[str]] = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )
    return tokens


def _fit(texts: Sequence[str], k1: float, b: float) -> Any | None:
    """A BM25 index of ``texts``, or None when no text has a single searchable word."""
    import bm25s

    tokens = tokenize(texts)
    if not any(tokens):
        return None
    retriever = bm25s.BM25(method=BM25_METHOD, k1=k1, b=b)
    retriever.index(tokens, show_progress=False)
    return retriever


def fit_lexical(
    passages: Sequence[Passage], k1: float = BM25_K1, b: float = BM25_B
) -> LexicalIndex:
    """The two-field (text, title) BM25 index of ``passages``, in memory.

    A field without a single searchable word is left out and scores zero. ``k1`` and ``b``
    are the shipped settings unless a tuning run asks for others.
    """
    text, title = (_fit([p[name] for p in passages], k1, b) for name in ("text", "title"))
    return LexicalIndex(text, title, list(passages), corpus_hash(passages))


def build_bm25(target: Path, passages: Sequence[Passage]) -> None:
    """Build the two-field BM25 index of ``passages`` (shipped settings) into a new ``target``."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    index = fit_lexical(passages)
    for name, fitted in (("text", index.text), ("title", index.title)):
        if fitted is not None:
            fitted.save(str(target / name), show_progress=False)
    with (target / "passages.json").open("w", encoding="utf-8") as handle:
        json.dump(list(passages), handle)
        handle.flush()
        os.fsync(handle.fileno())


@dataclass(frozen=True)
class LexicalIndex:
    """A loaded two-field BM25 index and the passages it ranks."""

    text: Any
    title: Any
    passages: list[Passage]
    sha256: str

    def scores(self, query: str, title_weight: float = TITLE_WEIGHT) -> Any:
        """BM25 score of every passage: text field plus ``title_weight`` x title field."""
        import numpy as np

        tokens = tokenize([query])[0]
        if not tokens:
            return np.zeros(len(self.passages), dtype=np.float32)
        total = np.zeros(len(self.passages), dtype=np.float32)
        with _lock:  # bm25s scoring shares numpy buffers
            for field_index, weight in ((self.text, 1.0), (self.title, title_weight)):
                if field_index is not None:
                    total += weight * field_index.get_scores(tokens)
        return total

    def rank(self, query: str, k: int, title_weight: float = TITLE_WEIGHT) -> list[tuple[str, int]]:
        """The ``k`` best documents as ``(document id, best passage)``; zero scores dropped."""
        import numpy as np

        scores = self.scores(query, title_weight)
        positive = int(np.count_nonzero(scores > 0))
        if positive == 0:
            return []
        depth = min(positive, max(4 * k, 200))
        while True:  # widen until k distinct documents or every positive passage is in
            top = np.argpartition(-scores, depth - 1)[:depth]
            top = top[np.argsort(-scores[top], kind="stable")]
            ranked = best_per_document(((self.passages[i]["doc"], int(i)) for i in top), k)
            if len(ranked) == k or depth == positive:
                return ranked
            depth = min(positive, depth * 4)


@cache
def _load(collection: str, generation: str) -> LexicalIndex:
    import bm25s

    target = bm25_dir(collection, generation)
    try:
        passages: list[Passage] = json.loads((target / "passages.json").read_text("utf-8"))
        text, title = (
            bm25s.BM25.load(str(target / name), show_progress=False)
            if (target / name).exists()
            else None
            for name in ("text", "title")
        )
    except (OSError, ValueError) as exc:
        raise IndexMismatchError(
            f"lexical index of {collection!r} is unreadable ({type(exc).__name__}): re-run "
            f"`factdebate index PATH --collection {collection}`"
        ) from exc
    return LexicalIndex(text, title, passages, corpus_hash(passages))


def lexical_index(manifest: Manifest) -> LexicalIndex:
    """Load the live lexical index of a collection, checked against its manifest.

    Raises:
        IndexMismatchError: passage count or corpus hash differ from the manifest.
    """
    index = _load(manifest.collection, manifest.generation)
    if len(index.passages) != manifest.passages or index.sha256 != manifest.corpus_sha256:
        _load.cache_clear()
        raise IndexMismatchError(
            f"lexical index of {manifest.collection!r} does not match its manifest "
            f"({len(index.passages)} passages, manifest {manifest.passages}): re-run "
            f"`factdebate index PATH --collection {manifest.collection}`"
        )
    return index


def to_evidence(passage: Passage, source: str, score: float) -> Evidence:
    """A passage as the evidence shown to agents, named by its document's id."""
    return Evidence(
        id=passage["doc"], title=passage["title"], text=passage["text"], source=source, score=score
    )


class OfflineSearch:
    """Stemmed BM25 over a local collection: the no-network stand-in for web search."""

    name = "bm25"

    def __init__(self, collection: str) -> None:
        """Search ``collection`` (its index is loaded on first use)."""
        self.collection = collection

    def search(self, query: str, k: int) -> list[Evidence]:
        """The ``k`` best distinct documents, each shown by its best-scoring passage."""
        index = lexical_index(live_manifest(self.collection))
        scores = index.scores(query)
        return [
            to_evidence(index.passages[i], "bm25", float(scores[i]))
            for _, i in index.rank(query, k)
        ]


class TavilySearch:
    """Web search through the Tavily API (needs ``TAVILY_API_KEY``)."""

    name = "tavily"

    def __init__(self, api_key: str, timeout: float = 30.0) -> None:
        """Create a client; the key is kept inside the client, never logged."""
        from tavily import TavilyClient

        self._client = TavilyClient(api_key=api_key)
        self._timeout = timeout

    def search(self, query: str, k: int) -> list[Evidence]:
        """Top-``k`` web results as evidence (url as id)."""
        response = self._client.search(query[:400], max_results=k, timeout=self._timeout)
        return [
            Evidence(
                id=str(r.get("url", "")),
                title=str(r.get("title", "")),
                text=str(r.get("content", "")),
                source="tavily",
                score=float(r.get("score", 0.0)),
            )
            for r in response.get("results", [])[:k]
        ]


def search_backend(kind: str, collection: str) -> SearchBackend:
    """Pick the search backend: ``tavily``, ``offline`` or ``auto`` (Tavily iff a key is set).

    ``openalex`` searches scholarly abstracts (``tools.openalex``; settings from OPENALEX_*).
    """
    if kind == "openalex":
        from tools.openalex import OpenAlexSearch

        return OpenAlexSearch.from_env()
    key = os.environ.get("TAVILY_API_KEY", "")
    if kind == "tavily" or (kind == "auto" and key):
        if not key:
            raise ValueError(
                "search_backend='tavily' needs the TAVILY_API_KEY environment variable"
            )
        return TavilySearch(key)
    return OfflineSearch(collection)
