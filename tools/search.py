"""Search backends with one result shape: Tavily web search, or BM25 over a local collection."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from tools.corpus import data_home
from tools.records import Evidence
from tools.vectorstore import IndexMissingError

_lock = threading.Lock()


class SearchBackend(Protocol):
    """Anything that turns a query into ranked evidence."""

    name: str

    def search(self, query: str, k: int) -> list[Evidence]:
        """Return at most ``k`` documents, best first."""
        ...


def bm25_dir(collection: str) -> Path:
    """Where the lexical index of ``collection`` lives."""
    return data_home() / "bm25" / collection


def build_bm25(collection: str, docs: Sequence[Evidence]) -> None:
    """Build and save the BM25 index of ``collection``."""
    import bm25s

    texts = [f"{d['title']}\n{d['text']}" for d in docs]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    target = bm25_dir(collection)
    target.mkdir(parents=True, exist_ok=True)
    retriever.save(str(target))
    records = [{"id": d["id"], "title": d["title"], "text": d["text"]} for d in docs]
    (target / "documents.json").write_text(json.dumps(records), encoding="utf-8")
    _load_bm25.cache_clear()


@cache
def _load_bm25(collection: str) -> tuple[Any, list[dict[str, str]]]:
    import bm25s

    target = bm25_dir(collection)
    if not (target / "documents.json").exists():
        raise IndexMissingError(collection)
    docs = json.loads((target / "documents.json").read_text(encoding="utf-8"))
    return bm25s.BM25.load(str(target)), docs


class OfflineSearch:
    """BM25 keyword search over a local collection: the no-network stand-in for web search."""

    name = "bm25"

    def __init__(self, collection: str) -> None:
        """Search ``collection`` (its index is loaded on first use)."""
        self.collection = collection

    def search(self, query: str, k: int) -> list[Evidence]:
        """Rank the collection's documents by BM25 score; zero-score hits are dropped."""
        import bm25s

        retriever, docs = _load_bm25(self.collection)
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        with _lock:
            ids, scores = retriever.retrieve(tokens, k=min(k, len(docs)), show_progress=False)
        return [
            Evidence(
                id=docs[int(i)]["id"],
                title=docs[int(i)]["title"],
                text=docs[int(i)]["text"],
                source="bm25",
                score=float(s),
            )
            for i, s in zip(ids[0], scores[0], strict=True)
            if float(s) > 0
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
