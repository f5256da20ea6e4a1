"""An OpenAI-compatible chat server on 127.0.0.1 that behaves like a provider about limits.

It answers ``POST /v1/chat/completions`` with text from a responder function, honours
``max_completion_tokens``/``max_tokens`` by cutting the answer (one token = 4 characters, as
the recorded answers count them) and then reports ``finish_reason: "length"``, reports
usage, and records every request so tests can see caps and response formats. Asked for
``n`` samples, it sends one choice (as servers that ignore ``n`` do) unless ``honours_n``,
then ``n`` choices, each from its own responder call. With ``status``
set (401, 404, ...) it answers every request with that HTTP error instead, as a provider
refusing a key or not knowing a model does.

Given a ``Behaviour`` it also acts like a hosted account: requests- and tokens-per-minute
limits refilled continuously (a request charged its prompt plus its ``max_tokens``, as
OpenAI counts), a 429 with ``Retry-After``/``retry-after-ms`` past them, ``x-ratelimit-*``
headers on every answer, lognormal latency, a share of 500s and of requests that hang. Its
random draws are seeded per request number, so a run's faults are the same every time;
tests keep the latencies tiny, so nothing depends on the machine's speed.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.services import serving_in_thread

Responder = Callable[[str, dict[str, Any]], str]
CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    """Token count as the recorded answers estimate it."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def by_kind(rules: Sequence[tuple[str, str]], default: str = "") -> Responder:
    """A responder answering by prompt kind: the answer of the first rule whose text the
    prompt contains (e.g. a debater's, a judge's, a scorer's prompt), else ``default``."""

    def answer(prompt: str, body: dict[str, Any]) -> str:
        return next((text for marker, text in rules if marker in prompt), default)

    return answer


@dataclass(frozen=True)
class Behaviour:
    """How the fake behaves as a hosted account (every part off by default)."""

    rpm: int = 0
    """Requests per minute accepted (0 = no limit)."""
    tpm: int = 0
    """Tokens per minute accepted (0 = no limit)."""
    window_s: float = 60.0
    """Seconds of the limit a bucket holds: 60 = per minute (bursts allowed), 1 = per second."""
    charge_cap: bool = True
    """A request costs its prompt plus its whole ``max_tokens`` (else its prompt and answer)."""
    latency_median_s: float = 0.0
    latency_sigma: float = 0.0
    """Lognormal spread of the latency (0 = always the median)."""
    latency_max_s: float = 8.0
    error_share: float = 0.0
    """Share of admitted requests answered with a 500."""
    hang_share: float = 0.0
    """Share of admitted requests that hang ``hang_s`` before answering."""
    hang_s: float = 600.0
    seed: int = 0


@dataclass
class _Bucket:
    """A provider's continuously refilled limit."""

    per_minute: float
    window_s: float
    level: float = -1.0
    stamp: float = 0.0

    @property
    def capacity(self) -> float:
        return max(1.0, self.per_minute * self.window_s / 60.0)

    def refill(self, at: float) -> None:
        if self.level < 0:
            self.level, self.stamp = self.capacity, at
        self.level = min(self.capacity, self.level + (at - self.stamp) * self.per_minute / 60)
        self.stamp = at

    def short_s(self, amount: float) -> float:
        """Seconds until ``amount`` fits (0: it fits now)."""
        return max(0.0, (min(amount, self.capacity) - self.level) * 60 / self.per_minute)

    def reset_s(self) -> float:
        """Seconds until the bucket is full again."""
        return (self.capacity - self.level) * 60 / self.per_minute


def _duration(seconds: float) -> str:
    """A reset duration as OpenAI writes it (``"1m2.5s"``, ``"20ms"``)."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.3g}s" if minutes else f"{rest:.3g}s"


class _Server(ThreadingHTTPServer):
    """Takes a burst of connections as a provider does (the default backlog of 5 resets some)."""

    request_queue_size = 256
    daemon_threads = True


class FakeProvider:
    """A running fake server: its base URL, the requests it got, and the answers it sent."""

    def __init__(
        self,
        responder: Responder,
        status: int | None = None,
        honours_n: bool = False,
        behaviour: Behaviour | None = None,
    ) -> None:
        self.responder = responder
        self.status = status
        """HTTP error status to answer every request with (None: answer normally)."""
        self.honours_n = honours_n
        self.behaviour = behaviour or Behaviour()
        self.requests: list[dict[str, Any]] = []
        """Bodies of the requests answered or refused with ``status`` (not 429s or 500s)."""
        self.replies: list[dict[str, Any]] = []
        self.counts = dict.fromkeys(("received", "answered", "limited", "errors", "hangs"), 0)
        """Requests received in all, answered, refused with a 429, failed with a 500, hung."""
        self.charged: list[tuple[float, int]] = []
        """(time, tokens) of every admitted request, as the limits counted it."""
        self.lock = threading.Lock()
        self.closing = threading.Event()
        b = self.behaviour
        self.buckets = {
            kind: _Bucket(limit, b.window_s)
            for kind, limit in (("requests", b.rpm), ("tokens", b.tpm))
            if limit > 0
        }
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def request_count(self) -> int:
        """Every request the provider received (answered, refused or failed)."""
        return self.counts["received"]

    def _admit(self, body: dict[str, Any], prompt: str) -> tuple[str, dict[str, str], Any]:
        """Whether a request passes the limits (``ok``, ``limited``, ``error``, ``hang``),
        the ``x-ratelimit-*`` headers to send, and its seeded random source."""
        b = self.behaviour
        asked = body.get("max_completion_tokens") or body.get("max_tokens") or 0
        cost = tokens(prompt) + (asked * (body.get("n") or 1) if b.charge_cap else 0)
        with self.lock:
            self.counts["received"] += 1
            rng = random.Random(b.seed * 1_000_003 + self.counts["received"])
            at = time.monotonic()
            for bucket in self.buckets.values():
                bucket.refill(at)
            wait = (
                max(
                    (bucket.short_s(1 if kind == "requests" else cost))
                    for kind, bucket in self.buckets.items()
                )
                if self.buckets
                else 0.0
            )
            if wait > 0:
                self.counts["limited"] += 1
                outcome = "limited"
            else:
                for kind, bucket in self.buckets.items():
                    bucket.level -= 1 if kind == "requests" else cost
                self.charged.append((at, cost))
                draw = rng.random()
                outcome = "ok"
                if draw < b.error_share:
                    outcome = "error"
                    self.counts["errors"] += 1
                elif draw < b.error_share + b.hang_share:
                    outcome = "hang"
                    self.counts["hangs"] += 1
            headers = self._limit_headers()
        if outcome == "limited":
            headers["retry-after"] = f"{wait:.3f}"
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
        return outcome, headers, rng

    def _limit_headers(self) -> dict[str, str]:
        """OpenAI's ``x-ratelimit-*`` headers for the buckets as they stand (lock held)."""
        headers: dict[str, str] = {}
        for kind, bucket in self.buckets.items():
            headers[f"x-ratelimit-limit-{kind}"] = str(int(bucket.per_minute))
            headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, int(bucket.level)))
            headers[f"x-ratelimit-reset-{kind}"] = _duration(bucket.reset_s())
        return headers

    def _latency(self, rng: random.Random) -> float:
        b = self.behaviour
        if b.latency_median_s <= 0:
            return 0.0
        spread = rng.gauss(0.0, b.latency_sigma) if b.latency_sigma > 0 else 0.0
        return min(b.latency_max_s, b.latency_median_s * math.exp(spread))

    def model(self, name: str = "fake-capable") -> str:
        """The model setting that reaches this server."""
        return f"openai-compatible:{name}@{self.url}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if provider.status is not None:
                    with provider.lock:
                        provider.counts["received"] += 1
                        provider.requests.append(body)
                    self._error(provider.status)
                    return
                prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
                outcome, limit_headers, rng = provider._admit(body, prompt)
                if outcome == "limited":
                    self._error(429, limit_headers)
                    return
                wait = provider._latency(rng)
                if outcome == "hang":
                    wait = provider.behaviour.hang_s
                if wait > 0 and provider.closing.wait(wait):
                    return  # the server stops: a hung request never answers
                if outcome == "error":
                    self._error(500, limit_headers)
                    return
                asked = body.get("n") or 1
                choices, spent = [], 0
                for index in range(asked if provider.honours_n else 1):
                    answer = provider.responder(prompt, body)
                    cap = body.get("max_completion_tokens") or body.get("max_tokens")
                    finish = "stop"
                    if cap is not None and tokens(answer) > cap:
                        answer, finish = answer[: cap * CHARS_PER_TOKEN], "length"
                    spent += tokens(answer)
                    with provider.lock:
                        if index == 0:
                            provider.requests.append(body)
                        provider.replies.append(
                            {"prompt": prompt, "answer": answer, "finish": finish}
                        )
                    choices.append(
                        {
                            "index": index,
                            "message": {"role": "assistant", "content": answer},
                            "finish_reason": finish,
                        }
                    )
                payload = {
                    "id": f"chatcmpl-{len(provider.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": choices,
                    "usage": {
                        "prompt_tokens": tokens(prompt),
                        "completion_tokens": spent,
                        "total_tokens": tokens(prompt) + spent,
                    },
                }
                with provider.lock:
                    provider.counts["answered"] += 1
                    if not provider.behaviour.charge_cap and provider.charged:
                        provider.charged.append((provider.charged[-1][0], spent))
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in limit_headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, headers: dict[str, str] | None = None) -> None:
                """An OpenAI-style error body with ``status`` (and ``headers``)."""
                message = {
                    401: "Incorrect API key provided",
                    404: "The model does not exist",
                    429: "Rate limit reached for requests",
                    500: "The server had an error while processing your request",
                }
                error = {
                    "message": message.get(status, f"error {status}"),
                    "type": "invalid_request_error",
                    "code": str(status),
                }
                data = json.dumps({"error": error}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


@contextmanager
def fake_provider(
    responder: Responder,
    status: int | None = None,
    honours_n: bool = False,
    behaviour: Behaviour | None = None,
) -> Iterator[FakeProvider]:
    """Run a FakeProvider on 127.0.0.1 for the duration of the block, then stop it."""
    provider = FakeProvider(responder, status, honours_n, behaviour)
    with serving_in_thread(provider.server):
        try:
            yield provider
        finally:
            provider.closing.set()  # hung requests end before the server shuts
