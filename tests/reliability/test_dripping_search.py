"""A search engine that drips its answer one byte at a time cannot hold a run past its timeout."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.bounded import PROMPT_S, assert_prompt, run_bounded
from tests.conftest import REPO

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"


@contextmanager
def dripping_server(every_s: float = 0.5) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that answers 200 and then one byte every ``every_s``."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def drip(conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(HEADERS)
            while not stop.is_set():
                conn.sendall(b" ")
                time.sleep(every_s)
        except OSError:
            pass
        finally:
            conn.close()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_serper_gives_up_on_a_dripping_answer_at_its_timeout():
    from factdebate.tools.websearch.backends import SerperSearch

    outcome: list[BaseException] = []

    def search(url: str) -> None:
        try:
            SerperSearch("key-123456", url, timeout=1.0).search("eiffel tower", 3)
        except BaseException as exc:
            outcome.append(exc)

    with dripping_server() as url:
        worker = threading.Thread(target=search, args=(url,), daemon=True)
        worker.start()
        worker.join(timeout=10)  # a per-read timeout alone never fires on a drip
        assert not worker.is_alive(), "the search was still reading after 10 s"
    assert outcome and isinstance(outcome[0], TimeoutError), outcome


CHILD = """
import asyncio, sys, time
from factdebate.tools.dispatch import retrieve
started = time.monotonic()
try:
    asyncio.run(retrieve("search", "eiffel tower", k=3, collection="default",
                         search_backend_name="serper", timeout=1.0))
except TimeoutError:
    print(f"timed out after {time.monotonic() - started:.1f} s", flush=True)
"""


def test_a_timed_out_search_lets_the_process_finish(tmp_path):
    """The retrieval is given up at its timeout and the process then exits (no hang at exit)."""
    env = {
        **os.environ,
        "SERPER_API_KEY": "key-123456",
        "FACTDEBATE_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(REPO),
    }
    with dripping_server(every_s=0.05) as url:  # each read resets a per-read timeout
        env["SERPER_BASE_URL"] = url
        started = time.monotonic()
        done = run_bounded(  # a process that hangs after its search timed out fails here
            [sys.executable, "-c", CHILD],
            capture_output=True,
            text=True,
            what="verify against a dripping search",
            guard_s=PROMPT_S,
            cwd=REPO,
            env=env,
        )
    assert "timed out after" in done.stdout, done.stdout + done.stderr
    assert_prompt(started, "verify against a dripping search")
