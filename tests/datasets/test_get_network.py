"""`datasets get` on a bad network: a dropped body resumed, a planted link refused, a drip cut.

Each server runs in a thread on 127.0.0.1 and misbehaves in one way; the files are the
FEVER-Symmetric fixtures of ``test_get``.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.datasets.records import download_root
from factdebate.datasets.sources import RELEASES
from tests.datasets.test_get import DEV, fixture_files, fixture_release
from tests.services import serving_in_thread

Answer = Callable[[BaseHTTPRequestHandler, bytes, int], None]
"""Writes the body of one answer: the handler, the file's bytes, the first byte asked for."""


class Misbehaving:
    """A file server on 127.0.0.1 whose answers ``answer`` writes; it keeps every Range asked."""

    def __init__(self, files: dict[str, bytes], answer: Answer) -> None:
        self.files, self.answer, self.ranges = files, answer, list[str | None]()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                wanted = self.headers.get("Range")
                server.ranges.append(wanted)
                found = re.fullmatch(r"bytes=(\d+)-", wanted or "")
                start = int(found[1]) if found else 0
                self.send_response(206 if found else 200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                try:
                    server.answer(self, data, start)
                except OSError:  # the client went away
                    return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"


@contextmanager
def misbehaving(answer: Answer) -> Iterator[Misbehaving]:
    server = Misbehaving(fixture_files(), answer)
    with serving_in_thread(server.http):
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home whose fever-mini release is the fixtures."""
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FACTDEBATE_DATASETS", raising=False)
    monkeypatch.delenv("FACTDEBATE_DATASETS_MIRROR", raising=False)
    monkeypatch.setitem(RELEASES, "fever-mini", fixture_release())
    assert download_root() == tmp_path / "home" / "datasets"
    return tmp_path / "home"


def get(url: str, *extra: str) -> Any:
    args = ["datasets", "get", "fever-mini", "--mirror", url, *extra]
    return CliRunner().invoke(app, args, env={"COLUMNS": "400"})


FOLDER = ("datasets", "fever", "fever_rag_mini")


def test_a_body_dropped_midway_is_resumed_to_the_release_digest(home: Path) -> None:
    dropped: set[int] = set()

    def drop_first(handler: BaseHTTPRequestHandler, data: bytes, start: int) -> None:
        if len(data) > 200 and not dropped:  # the first big file: 150 bytes, then closed
            dropped.add(start)
            handler.wfile.write(data[start : start + 150])
            handler.wfile.flush()
            handler.close_connection = True
            return
        handler.wfile.write(data[start:])

    with misbehaving(drop_first) as server:
        done = get(server.url)
    assert done.exit_code == 0, done.output
    assert "bytes=150-" in server.ranges  # resumed where the body stopped, in the same command
    dev = home.joinpath(*FOLDER) / "fever_symmetric_dev.jsonl"
    assert hashlib.sha256(dev.read_bytes()).hexdigest() == (
        hashlib.sha256(fixture_files()[DEV]).hexdigest()
    )
    assert not list(home.joinpath(*FOLDER).glob("*.part"))


def test_a_body_that_stops_every_time_keeps_its_partial_file(home: Path) -> None:
    def stop_each_time(handler: BaseHTTPRequestHandler, data: bytes, start: int) -> None:
        handler.wfile.write(data[start : start + 10])  # 10 bytes per connection, never whole

    with misbehaving(stop_each_time) as server:
        done = get(server.url)
    assert done.exit_code == 2, done.output
    line = done.output.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert "connection closed" in line and "partial file is kept" in line
    part = next(home.joinpath(*FOLDER).glob("*.part"))
    assert part.stat().st_size == 50  # five connections, ten bytes each: kept to resume


def test_a_planted_part_link_is_refused_and_writes_nothing_outside(
    home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"keep me\n")
    folder = home.joinpath(*FOLDER)
    folder.mkdir(parents=True)
    (folder / "fever_symmetric_dev.jsonl.part").symlink_to(outside)

    def whole(handler: BaseHTTPRequestHandler, data: bytes, start: int) -> None:
        handler.wfile.write(data[start:])

    with misbehaving(whole) as server:
        done = get(server.url)
    assert done.exit_code == 2
    assert "is a link" in done.output and "refused" in done.output
    assert len(done.output.strip().splitlines()) == 1
    assert outside.read_bytes() == b"keep me\n"


def test_a_linked_folder_inside_the_datasets_folder_is_refused(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "datasets" / "fever").mkdir(parents=True)
    (home / "datasets" / "fever" / "fever_rag_mini").symlink_to(elsewhere)

    def whole(handler: BaseHTTPRequestHandler, data: bytes, start: int) -> None:
        handler.wfile.write(data[start:])

    with misbehaving(whole) as server:
        done = get(server.url)
    assert done.exit_code == 2 and "a link or not a folder" in done.output
    assert not list(elsewhere.iterdir())


def test_a_drip_server_is_cut_at_the_deadline(home: Path) -> None:
    def drip(handler: BaseHTTPRequestHandler, data: bytes, start: int) -> None:
        for n in range(start, min(len(data), start + 200)):  # a byte at a time, slowly
            handler.wfile.write(data[n : n + 1])
            handler.wfile.flush()
            time.sleep(0.2)

    with misbehaving(drip) as server:
        done = get(server.url, "--deadline", "1")
    assert done.exit_code == 2, done.output
    assert "deadline of 1 s passed" in done.output and "partial file is kept" in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_redirect_loop_is_one_line(home: Path) -> None:
    class Loop(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

    http = ThreadingHTTPServer(("127.0.0.1", 0), Loop)
    with serving_in_thread(http):
        done = get(f"http://127.0.0.1:{http.server_address[1]}")
    assert done.exit_code == 2
    assert "too many redirects" in done.output
    assert len(done.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [("--deadline", "0", "--deadline"), ("--min-rate", "-1", "--min-rate")],
)
def test_download_limits_out_of_bounds_are_one_line(
    home: Path, flag: str, value: str, words: str
) -> None:
    done = get("http://127.0.0.1:9", flag, value)
    assert done.exit_code == 2 and words in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_datasets_setting_naming_a_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    monkeypatch.setenv("FACTDEBATE_DATASETS", str(a_file))
    done = CliRunner().invoke(app, ["datasets", "get", "fever-mini", "--mirror", "http://x"])
    assert done.exit_code == 2 and "is not a folder" in done.output
    assert len(done.output.strip().splitlines()) == 1 and "Traceback" not in done.output


def test_a_download_under_the_minimum_rate_is_cut_once_the_window_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from factdebate.datasets import download

    at = [0.0]
    monkeypatch.setattr("time.monotonic", lambda: at[0])
    clock = download.Clock(download.limits(deadline_s=3600, min_rate=100))
    for second in range(0, 30, 5):  # 10 bytes a second, under the window: not judged yet
        at[0] = float(second)
        clock.check(second * 10)
    at[0] = 31.0
    with pytest.raises(download._Cut, match="under the minimum 100"):
        clock.check(310)


def test_an_unreachable_host_names_the_mirror_and_what_it_holds(home: Path) -> None:
    done = get("http://127.0.0.1:9")
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1
    assert "--mirror URL" in done.output and "official files under the same paths" in done.output
