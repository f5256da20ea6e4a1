"""OpenAlex works search: keywords from the query, top abstracts, each cut to a short summary."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from factdebate.tools.core.env import env_float, env_int
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.records import Evidence

OPENALEX_URL = "https://api.openalex.org"
MAX_KEYWORDS = 8
Embed = Callable[[list[str]], list[list[float]]]
Summarise = Callable[[str, str], str]

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")


def keywords(query: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """Content words of ``query`` in order, without stopwords or repeats (at most ``limit``)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    stop = {w.lower() for w in STOPWORDS_EN_PLUS}
    words: list[str] = []
    for word in _WORD.findall(query):
        low = word.lower()
        if low not in stop and len(low) > 1 and low not in (w.lower() for w in words):
            words.append(word)
    return words[:limit]


def abstract_text(inverted: Any) -> str:
    """Rebuild an abstract from OpenAlex's inverted index (word -> positions); '' if absent."""
    if not isinstance(inverted, dict):
        return ""
    slots: dict[int, str] = {}
    for word, positions in inverted.items():
        for pos in positions if isinstance(positions, list) else ():
            if isinstance(pos, int):
                slots[pos] = str(word)
    return " ".join(slots[i] for i in sorted(slots))


def split_sentences(text: str) -> list[str]:
    """Cut text at sentence ends (., !, ? followed by a capital, digit or quote)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def extractive_summary(
    query: str, text: str, sentences: int = 3, embed: Embed | None = None
) -> str:
    """Keep the ``sentences`` sentences closest to both the query and the abstract's gist.

    Each sentence is scored by the cosine similarity of its embedding to the query plus to
    the mean of all sentence embeddings (the text's centre); the best are kept in their
    original order. ``embed`` defaults to the project's MiniLM sentence embeddings.
    """
    import numpy as np

    parts = split_sentences(text)
    if len(parts) <= sentences:
        return " ".join(parts)
    if embed is None:
        from factdebate.tools.retrieval.embeddings import default_embeddings

        embed = default_embeddings().embed_documents
    vectors = np.asarray(embed([query, *parts]), dtype=float)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    query_vec, sent_vecs = vectors[0], vectors[1:]
    centre = sent_vecs.mean(axis=0)
    centre /= max(float(np.linalg.norm(centre)), 1e-12)
    scores = sent_vecs @ query_vec + sent_vecs @ centre
    keep = sorted(int(i) for i in np.argsort(-scores, kind="stable")[:sentences])
    return " ".join(parts[i] for i in keep)


def _transient(exc: BaseException) -> bool:
    """Worth another try: network faults, timeouts, 429 and 5xx answers."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


class OpenAlexSearch:
    """Scholarly search through the OpenAlex works API, abstracts summarised before use.

    As in Tool-MAD's PubMedQA setting: keywords are taken from the query, the top-k works
    with an abstract are fetched, and each abstract is cut to a short extractive summary.
    """

    name = "openalex"

    def __init__(
        self,
        base_url: str = OPENALEX_URL,
        *,
        timeout: float = 20.0,
        retries: int = 2,
        backoff: float = 0.5,
        mailto: str = "",
        api_key: str = "",
        summary_sentences: int = 3,
        summarise: Summarise | None = None,
    ) -> None:
        """Configure the client; every setting is bounded and checked here.

        Args:
            base_url: API root (a mirror or a local fake for tests).
            timeout: Seconds per HTTP request (0 < timeout <= 300).
            retries: Extra attempts after a transient fault (0..10), with exponential backoff.
            backoff: First backoff wait in seconds (0..60).
            mailto: E-mail for OpenAlex's polite pool (optional).
            api_key: OpenAlex API key (optional; sent as a parameter, never logged).
            summary_sentences: Sentences kept per abstract (1..20).
            summarise: ``(query, abstract) -> summary``; default the MiniLM extractive summary.

        """
        if not 0 < timeout <= 300:
            raise SettingsError(f"OpenAlex timeout must be in (0, 300] seconds, got {timeout}")
        if not 0 <= retries <= 10:
            raise SettingsError(f"OpenAlex retries must be 0..10, got {retries}")
        if not 0 <= backoff <= 60:
            raise SettingsError(f"OpenAlex backoff must be 0..60 seconds, got {backoff}")
        if not 1 <= summary_sentences <= 20:
            raise SettingsError(f"summary_sentences must be 1..20, got {summary_sentences}")
        self.base_url = base_url.rstrip("/")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._mailto, self._api_key = mailto, api_key
        self._summary_sentences = summary_sentences
        self._custom_summary = summarise is not None
        self._summarise: Summarise = summarise or (
            lambda q, text: extractive_summary(q, text, summary_sentences)
        )

    def cache_options(self) -> dict[str, Any] | None:
        """What besides query and k shapes an answer (the search cache keys on it).

        None with a summariser of the caller's own: its answers are not keyed or cached.
        """
        if self._custom_summary:
            return None
        return {"url": self.base_url, "summary": "extractive", "sentences": self._summary_sentences}

    @classmethod
    def from_env(cls) -> OpenAlexSearch:
        """A client set from the optional ``OPENALEX_*`` environment variables.

        ``OPENALEX_URL``, ``OPENALEX_MAILTO``, ``OPENALEX_API_KEY``, ``OPENALEX_TIMEOUT`` and
        ``OPENALEX_RETRIES``.
        """
        timeout = env_float("OPENALEX_TIMEOUT", 20.0, 0.0, 300.0)
        retries = env_int("OPENALEX_RETRIES", 2, 0, 10)
        return cls(
            os.environ.get("OPENALEX_URL", OPENALEX_URL),
            timeout=timeout,
            retries=retries,
            mailto=os.environ.get("OPENALEX_MAILTO", ""),
            api_key=os.environ.get("OPENALEX_API_KEY", ""),
        )

    def _params(self, query: str, k: int) -> dict[str, str | int]:
        params: dict[str, str | int] = {
            "search": " ".join(keywords(query)) or query[:200],
            "filter": "has_abstract:true",
            "per-page": max(1, min(k, 25)),
            "select": "id,display_name,abstract_inverted_index,publication_year,relevance_score",
        }
        if self._mailto:
            params["mailto"] = self._mailto
        if self._api_key:
            params["api_key"] = self._api_key
        return params

    def _fetch(self, params: dict[str, str | int]) -> list[Any]:
        """GET /works with retries on transient faults; the last fault is raised."""
        for attempt in Retrying(
            stop=stop_after_attempt(self.retries + 1),
            wait=wait_exponential(multiplier=self.backoff, max=30),
            retry=retry_if_exception(_transient),
            reraise=True,
        ):
            with attempt, httpx.Client(timeout=self.timeout) as client:
                response = client.get(f"{self.base_url}/works", params=params)
                response.raise_for_status()
                results = response.json().get("results")
                if not isinstance(results, list):
                    raise SettingsError("OpenAlex answer has no 'results' list")
                return results
        raise AssertionError("unreachable: tenacity re-raises the last fault")

    def search(self, query: str, k: int) -> list[Evidence]:
        """Top-``k`` works that have an abstract, each abstract summarised for the query."""
        found: list[Evidence] = []
        for rank, work in enumerate(self._fetch(self._params(query, k))):
            text = abstract_text(
                work.get("abstract_inverted_index") if isinstance(work, dict) else None
            )
            if not text:
                continue
            score = work.get("relevance_score")
            found.append(
                Evidence(
                    id=str(work.get("id") or f"openalex-{rank}"),
                    title=str(work.get("display_name") or ""),
                    text=self._summarise(query, text),
                    source="openalex",
                    score=float(score) if isinstance(score, int | float) else 1.0 / (rank + 1),
                )
            )
        return found[:k]
