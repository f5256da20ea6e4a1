"""Tavily and Serper against fake APIs on 127.0.0.1: results, outage, slow, 401, bad JSON."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from factdebate.nodes.context import Context
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.tools.websearch.backends import (
    SerperSearch,
    TavilySearch,
    WebSearchError,
    search_backend,
    web_backend_name,
)

KEY = "test-key-0123456789"

# Each API's answer shape (Tavily /search: docs.tavily.com; Serper /search: serper.dev).
TAVILY_ANSWER = {
    "query": "eiffel tower",
    "follow_up_questions": None,
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "Eiffel Tower - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Eiffel_Tower",
            "content": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
            "score": 0.91,
            "raw_content": None,
        },
        {"title": "No text", "url": "https://example.org/empty", "content": "", "score": 0.5},
        {
            "title": "Tower facts",
            "url": "https://example.org/facts",
            "content": "It was completed in 1889.",
            "score": 0.42,
            "raw_content": None,
        },
    ],
    "response_time": 1.02,
}
SERPER_ANSWER = {
    "searchParameters": {"q": "eiffel tower", "type": "search", "engine": "google"},
    "knowledgeGraph": {"title": "Eiffel Tower", "type": "Tower"},
    "organic": [
        {
            "title": "Eiffel Tower - Wikipedia",
            "link": "https://en.wikipedia.org/wiki/Eiffel_Tower",
            "snippet": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars.",
            "position": 1,
        },
        {"title": "Link only", "link": "https://example.org/nosnippet", "position": 2},
        {
            "title": "Tickets",
            "link": "https://example.org/tickets",
            "snippet": "Book tickets for the summit.",
            "sitelinks": [{"title": "Prices", "link": "https://example.org/prices"}],
            "position": 3,
        },
    ],
    "peopleAlsoAsk": [],
    "relatedSearches": [{"query": "eiffel tower height"}],
    "credits": 1,
}


class FakeSearchAPI:
    """Serves POST /search in Tavily's or Serper's shape; ``plan`` scripts each request.

    A step is 'ok', an HTTP status code, 'bad-json', 'huge' (6 MB), or ('slow', seconds).
    """

    def __init__(self, answer: dict[str, Any], key_header: str) -> None:
        self.plan: list[Any] = []
        self.bodies: list[dict[str, Any]] = []
        self.keys: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length", "0"))
                fake.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
                fake.keys.append(self.headers.get(key_header, ""))
                step = fake.plan.pop(0) if fake.plan else "ok"
                if isinstance(step, tuple):
                    time.sleep(step[1])
                    step = "ok"
                if self.path.split("?")[0] != "/search":
                    step = 404
                if isinstance(step, int):
                    payload = json.dumps({"detail": {"error": "Unauthorized"}}).encode()
                    self.send_response(step)
                else:
                    payload = {
                        "bad-json": b'{"results": [',
                        "huge": b'{"organic": [], "pad": "' + b"x" * 6_000_000 + b'"}',
                    }.get(step, json.dumps(answer).encode())
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)  # the client may have given up on a slow answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeSearchAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def tavily_api() -> Iterator[FakeSearchAPI]:
    with FakeSearchAPI(TAVILY_ANSWER, "Authorization") as fake:
        yield fake


@pytest.fixture
def serper_api() -> Iterator[FakeSearchAPI]:
    with FakeSearchAPI(SERPER_ANSWER, "X-API-KEY") as fake:
        yield fake


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_tavily_results_become_evidence(tavily_api: FakeSearchAPI) -> None:
    docs = TavilySearch(KEY, tavily_api.url, timeout=5).search("Is the Eiffel Tower in Paris?", 3)
    assert [d["id"] for d in docs] == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://example.org/facts",
    ]  # the result without text is dropped, not filled in
    assert docs[0]["source"] == "tavily" and docs[0]["score"] == pytest.approx(0.91)
    assert "lattice tower" in docs[0]["text"]
    assert tavily_api.keys == [f"Bearer {KEY}"]
    assert tavily_api.bodies[0]["query"] == "Is the Eiffel Tower in Paris?"
    assert tavily_api.bodies[0]["max_results"] == 3


def test_serper_results_become_evidence(serper_api: FakeSearchAPI) -> None:
    docs = SerperSearch(KEY, serper_api.url, timeout=5).search("eiffel tower", 2)
    assert [d["id"] for d in docs] == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://example.org/tickets",
    ]
    assert [d["score"] for d in docs] == [1.0, pytest.approx(1 / 3)]
    assert docs[1]["title"] == "Tickets" and docs[1]["source"] == "serper"
    assert serper_api.keys == [KEY]
    assert serper_api.bodies == [{"q": "eiffel tower", "num": 10}]


@pytest.mark.parametrize("backend", [TavilySearch, SerperSearch])
def test_faults_raise_one_clear_error(
    backend: type[TavilySearch] | type[SerperSearch],
    tavily_api: FakeSearchAPI,
    serper_api: FakeSearchAPI,
) -> None:
    fake = tavily_api if backend is TavilySearch else serper_api
    client = backend(KEY, fake.url, timeout=0.5)
    fake.plan = [401]
    with pytest.raises(WebSearchError, match="refused the API key"):
        client.search("q", 3)
    fake.plan = ["bad-json"]
    with pytest.raises(WebSearchError, match="not JSON"):
        client.search("q", 3)
    fake.plan = [("slow", 2.0)]
    with pytest.raises(TimeoutError):
        client.search("q", 3)
    fake.plan = [500]
    with pytest.raises(WebSearchError):
        client.search("q", 3)
    with pytest.raises(Exception) as outage:
        backend(KEY, f"http://127.0.0.1:{closed_port()}", timeout=2).search("q", 3)
    assert (
        "refused" in str(outage.value).lower() or "connect" in type(outage.value).__name__.lower()
    )


def test_an_answer_without_its_result_list_is_an_error(serper_api: FakeSearchAPI) -> None:
    serper_api.plan = []
    client = SerperSearch(KEY, serper_api.url, timeout=5)
    SERPER_ANSWER_BACKUP = dict(SERPER_ANSWER)
    try:
        SERPER_ANSWER.pop("organic")
        with pytest.raises(WebSearchError, match="no 'organic' list"):
            client.search("q", 3)
    finally:
        SERPER_ANSWER.update(SERPER_ANSWER_BACKUP)


def test_auto_order_and_missing_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    assert web_backend_name("auto") == "offline"
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    assert web_backend_name("auto") == "serper"
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    assert web_backend_name("auto") == "tavily"
    assert isinstance(search_backend("serper", "default"), SerperSearch)
    monkeypatch.delenv("SERPER_API_KEY")
    with pytest.raises(ValueError, match="SERPER_API_KEY"):
        search_backend("serper", "default")
    with pytest.raises(ValueError, match="unknown search_backend"):
        search_backend("bing", "default")
    with pytest.raises(ValueError, match="timeout"):
        SerperSearch(KEY, timeout=0)


@pytest.mark.parametrize(
    ("name", "env", "fixture"),
    [("tavily", "TAVILY", "tavily_api"), ("serper", "SERPER", "serper_api")],
)
def test_debater_search_records_each_fault(
    name: str,
    env: str,
    fixture: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the node helper: results, then each fault as one error record and no document."""
    fake: FakeSearchAPI = request.getfixturevalue(fixture)
    monkeypatch.setenv(f"{env}_API_KEY", KEY)
    monkeypatch.setenv(f"{env}_BASE_URL", fake.url)
    ctx = Context(search_backend=name, call_timeout_s=0.5)  # type: ignore[arg-type]

    def run() -> tuple[list[Any], list[Any]]:
        docs, errors = asyncio.run(
            retrieve_or_record(ctx, "search", "eiffel tower", agent="b", round_no=1)
        )
        return list(docs), list(errors)

    docs, errors = run()
    assert errors == [] and docs and {d["source"] for d in docs} == {name}
    for step, kind, words in [
        (401, "tool_error", "refused the API key"),
        ("bad-json", "tool_error", "not JSON"),
        (("slow", 2.0), "timeout", ""),
    ]:
        fake.plan = [step]
        docs, errors = run()
        assert docs == [] and len(errors) == 1, step
        assert errors[0]["kind"] == kind and words in errors[0]["message"], errors[0]
        assert KEY not in errors[0]["message"]
    monkeypatch.setenv(f"{env}_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    docs, errors = run()
    assert docs == [] and [e["kind"] for e in errors] == ["tool_error"]
    assert "Connect" in errors[0]["message"] or "refused" in errors[0]["message"].lower()


def test_an_oversized_serper_answer_is_refused(serper_api: FakeSearchAPI) -> None:
    serper_api.plan = ["huge"]
    with pytest.raises(WebSearchError, match="over 5,000,000 bytes"):
        SerperSearch(KEY, serper_api.url, timeout=5).search("q", 3)
