"""Web search backends (Tavily, Serper) with one result shape, and the backend chosen by name."""

from __future__ import annotations

import json
import os
import time
from functools import cache
from typing import Any, Protocol

import httpx

from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.records import Evidence

TAVILY_URL = "https://api.tavily.com"
SERPER_URL = "https://google.serper.dev"
URL_ENVS = {"tavily": "TAVILY_BASE_URL", "serper": "SERPER_BASE_URL"}
"""Environment variables naming another API root (a proxy, a mirror, or a test's fake)."""
KEY_ENVS = {"tavily": "TAVILY_API_KEY", "serper": "SERPER_API_KEY"}
AUTO_ORDER = ("tavily", "serper")
"""``search_backend=auto`` takes the first of these whose API key is set, else ``offline``."""
BACKENDS = ("auto", "tavily", "serper", "offline", "openalex")
TIMEOUT_RANGE = (0.1, 120.0)  # seconds per HTTP request (Tavily's client caps it at 120)
MAX_QUERY_CHARS = 400  # Tavily refuses longer queries; Google reads about 32 words
MAX_RESULTS = 20  # Tavily's max_results ceiling; Serper pages hold 10-100
MAX_SNIPPET_CHARS = 4000
MAX_TITLE_CHARS = 500
MAX_ANSWER_BYTES = 5_000_000  # a Serper page of 100 results is about 60 KB


class SearchBackend(Protocol):
    """Anything that turns a query into ranked evidence."""

    name: str

    def search(self, query: str, k: int) -> list[Evidence]:
        """Return at most ``k`` documents, best first."""
        ...


class WebSearchError(FactDebateError, RuntimeError):
    """A web search answer that cannot be used: refused key, bad status, malformed body."""


def _timeout(timeout: float) -> float:
    low, high = TIMEOUT_RANGE
    if not low <= timeout <= high:
        raise SettingsError(
            f"web search timeout must be {low:g}..{high:g} seconds, got {timeout!r}"
        )
    return timeout


def _results(body: Any, key: str, service: str) -> list[dict[str, Any]]:
    """The list under ``key`` of an API answer; anything else is a ``WebSearchError``."""
    found = body.get(key) if isinstance(body, dict) else None
    if not isinstance(found, list):
        raise WebSearchError(f"{service} answer has no {key!r} list")
    return [item for item in found if isinstance(item, dict)]


def _evidence(url: Any, title: Any, text: Any, source: str, score: float) -> Evidence | None:
    """One result as evidence, or None when it lacks a URL or any text (nothing is invented)."""
    if not isinstance(url, str) or not url or not isinstance(text, str) or not text.strip():
        return None
    return Evidence(
        id=url,
        title=title[:MAX_TITLE_CHARS] if isinstance(title, str) else "",
        text=text.strip()[:MAX_SNIPPET_CHARS],
        source=source,
        score=score,
    )


class TavilySearch:
    """Web search through the Tavily API with its own client, tavily-python (Tool-MAD's engine)."""

    name = "tavily"

    def __init__(self, api_key: str, base_url: str = TAVILY_URL, timeout: float = 30.0) -> None:
        """Create a client; the key stays inside the client and is never logged.

        Args:
            api_key: Tavily key (required: without one the client would go keyless).
            base_url: API root; a test's fake server or a proxy.
            timeout: Seconds per request (0.1..120).
        """
        from tavily import TavilyClient

        if not api_key:
            raise SettingsError("Tavily search needs an API key (TAVILY_API_KEY)")
        self._timeout = _timeout(timeout)
        self._url = base_url.rstrip("/")
        self._client = TavilyClient(api_key=api_key, api_base_url=self._url)

    def cache_options(self) -> dict[str, Any]:
        """What besides query and k shapes an answer (the search cache keys on it)."""
        return {"url": self._url, "query_chars": MAX_QUERY_CHARS}

    def search(self, query: str, k: int) -> list[Evidence]:
        """Top-``k`` web results as evidence (url as id, Tavily's relevance as score).

        Raises:
            TimeoutError: no answer within the timeout. WebSearchError: a refused key, an
            error status or a malformed answer. Connection faults propagate as they are.
        """
        import requests
        from tavily import errors

        try:
            body = self._client.search(
                query[:MAX_QUERY_CHARS], max_results=min(k, MAX_RESULTS), timeout=self._timeout
            )
        except errors.TimeoutError as exc:
            raise TimeoutError(f"Tavily: {exc}") from exc
        except errors.InvalidAPIKeyError as exc:
            raise WebSearchError(f"Tavily refused the API key (401) {exc}".strip()) from exc
        except (errors.ForbiddenError, errors.UsageLimitExceededError) as exc:
            raise WebSearchError(f"Tavily refused the request: {type(exc).__name__} {exc}") from exc
        except requests.HTTPError as exc:
            raise WebSearchError(f"Tavily answered {exc}") from exc
        except requests.JSONDecodeError as exc:
            raise WebSearchError(f"Tavily answer is not JSON: {exc}") from exc
        found = (
            _evidence(r.get("url"), r.get("title"), r.get("content"), "tavily", _score(r, rank))
            for rank, r in enumerate(_results(body, "results", "Tavily"))
        )
        return [e for e in found if e is not None][:k]


def _score(result: dict[str, Any], rank: int) -> float:
    score = result.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        return float(score)
    return 1.0 / (rank + 1)


class SerperSearch:
    """Google search through the Serper API (MAD-Fact's engine): organic results as evidence.

    LangChain's ``GoogleSerperAPIWrapper`` posts to a fixed URL with no timeout, so this
    talks to the same endpoint through httpx: ``POST {base}/search`` with the key in
    ``X-API-KEY`` and ``{"q", "num"}`` as the JSON body.
    """

    name = "serper"

    def __init__(self, api_key: str, base_url: str = SERPER_URL, timeout: float = 30.0) -> None:
        """Create a client; the key is sent only as a header, never logged.

        Args:
            api_key: Serper key.
            base_url: API root; a test's fake server or a proxy.
            timeout: Seconds per request (0.1..120).
        """
        if not api_key:
            raise SettingsError("Serper search needs an API key (SERPER_API_KEY)")
        self._key, self._url = api_key, base_url.rstrip("/")
        self._timeout = _timeout(timeout)

    def cache_options(self) -> dict[str, Any]:
        """What besides query and k shapes an answer (the search cache keys on it)."""
        return {"url": self._url, "query_chars": MAX_QUERY_CHARS}

    def search(self, query: str, k: int) -> list[Evidence]:
        """Top-``k`` organic Google results as evidence (link as id, snippet as text).

        Raises:
            TimeoutError: no answer within the timeout. WebSearchError: a refused key, an
            error status or a malformed answer. httpx.ConnectError: nothing listening.
        """
        try:
            raw = self._post({"q": query[:MAX_QUERY_CHARS], "num": min(max(k, 10), 100)})
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"Serper: no answer within {self._timeout:g} s") from exc
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise WebSearchError(f"Serper answer is not JSON: {exc}") from exc
        found = (
            _evidence(r.get("link"), r.get("title"), r.get("snippet"), "serper", 1.0 / (rank + 1))
            for rank, r in enumerate(_results(body, "organic", "Serper"))
        )
        return [e for e in found if e is not None][:k]

    def _post(self, payload: dict[str, Any]) -> bytes:
        """The body of a 200 answer to ``POST /search``, read up to ``MAX_ANSWER_BYTES``."""
        headers = {"X-API-KEY": self._key}
        with (
            httpx.Client(timeout=self._timeout) as client,
            client.stream("POST", f"{self._url}/search", json=payload, headers=headers) as response,
        ):
            if response.status_code in (401, 403):
                raise WebSearchError(f"Serper refused the API key ({response.status_code})")
            if response.status_code != 200:
                raise WebSearchError(f"Serper answered HTTP {response.status_code}")
            body = bytearray()
            deadline = time.monotonic() + self._timeout  # the whole answer, not each read
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    raise WebSearchError(f"Serper answer is over {MAX_ANSWER_BYTES:,} bytes")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer trickled in past the timeout")
            return bytes(body)


def web_backend_name(kind: str) -> str:
    """The backend ``kind`` resolves to: ``auto`` takes the first of ``AUTO_ORDER`` with a key."""
    if kind not in BACKENDS:
        raise SettingsError(f"unknown search_backend {kind!r}: expected {', '.join(BACKENDS)}")
    if kind != "auto":
        return kind
    return next((name for name in AUTO_ORDER if os.environ.get(KEY_ENVS[name])), "offline")


def search_backend(
    kind: str, collection: str, timeout: float = 30.0, milvus_uri: str = ""
) -> SearchBackend:
    """The search backend named ``tavily``, ``serper``, ``offline``, ``openalex`` or ``auto``.

    ``auto`` uses Tavily when ``TAVILY_API_KEY`` is set, else Serper when ``SERPER_API_KEY``
    is, else stemmed BM25 over ``collection`` (whose manifest is read from the Milvus server at
    ``milvus_uri`` when one is given). ``openalex`` searches scholarly abstracts
    (``openalex``; settings from OPENALEX_*). ``TAVILY_BASE_URL`` / ``SERPER_BASE_URL``
    point a web backend at another API root.

    Raises:
        ValueError: an unknown name, or a web backend named without its API key.
    """
    name = web_backend_name(kind)
    if name == "openalex":
        from factdebate.tools.websearch.openalex import OpenAlexSearch

        return OpenAlexSearch.from_env()
    if name == "offline":
        from factdebate.tools.retrieval.lexical_search import OfflineSearch

        return OfflineSearch(collection, milvus_uri)
    key = os.environ.get(KEY_ENVS[name], "")
    if not key:
        raise SettingsError(
            f"search_backend={name!r} needs the {KEY_ENVS[name]} environment variable"
        )
    base = os.environ.get(URL_ENVS[name], "") or (TAVILY_URL if name == "tavily" else SERPER_URL)
    return _web_client(name, key, base, min(max(timeout, TIMEOUT_RANGE[0]), TIMEOUT_RANGE[1]))


@cache
def _web_client(name: str, key: str, base: str, timeout: float) -> SearchBackend:
    """One client per setting (Tavily's keeps a connection pool), reused across searches."""
    backend = TavilySearch if name == "tavily" else SerperSearch
    return backend(key, base, timeout)
