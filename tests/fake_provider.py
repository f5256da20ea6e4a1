"""An OpenAI-compatible chat server on 127.0.0.1 that behaves like a provider about limits.

It answers ``POST /v1/chat/completions`` with text from a responder function, honours
``max_completion_tokens``/``max_tokens`` by cutting the answer (one token = 4 characters, as
the recorded answers count them) and then reports ``finish_reason: "length"``, reports
usage, and records every request so tests can see caps and response formats. Asked for
``n`` samples, it sends one choice (as servers that ignore ``n`` do) unless ``honours_n``,
then ``n`` choices, each from its own responder call. With ``status``
set (401, 404, ...) it answers every request with that HTTP error instead, as a provider
refusing a key or not knowing a model does.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.services import serving_in_thread

Responder = Callable[[str, dict[str, Any]], str]
CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    """Token count as the recorded answers estimate it."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class _Server(ThreadingHTTPServer):
    """Takes a burst of connections as a provider does (the default backlog of 5 resets some)."""

    request_queue_size = 256
    daemon_threads = True


class FakeProvider:
    """A running fake server: its base URL, the requests it got, and the answers it sent."""

    def __init__(
        self, responder: Responder, status: int | None = None, honours_n: bool = False
    ) -> None:
        self.responder = responder
        self.status = status
        self.honours_n = honours_n
        """HTTP error status to answer every request with (None: answer normally)."""
        self.requests: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

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
                        provider.requests.append(body)
                    self._error(provider.status)
                    return
                prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
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
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int) -> None:
                """An OpenAI-style error body with ``status``."""
                message = {401: "Incorrect API key provided", 404: "The model does not exist"}
                error = {
                    "message": message.get(status, f"error {status}"),
                    "type": "invalid_request_error",
                    "code": str(status),
                }
                data = json.dumps({"error": error}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@contextmanager
def fake_provider(
    responder: Responder, status: int | None = None, honours_n: bool = False
) -> Iterator[FakeProvider]:
    """Run a FakeProvider on 127.0.0.1 for the duration of the block, then stop it."""
    provider = FakeProvider(responder, status, honours_n)
    with serving_in_thread(provider.server):
        yield provider
