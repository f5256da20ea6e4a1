"""`factdebate datasets` and `datasets get`: official files from a local server on 127.0.0.1,
checked by SHA-256, resumed after an interruption, built into what the loaders read."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.datasets import CATALOG, load_fever_mini, load_fever_mini_corpus
from factdebate.datasets.download import Download
from factdebate.datasets.records import download_root
from factdebate.datasets.sources import RELEASES, Release, build_fever_mini, plain_text
from tests.fake_provider import fake_provider
from tests.services import serving_in_thread

DEV = "/TalSchuster/FeverSymmetric/abc/symmetric_v0.2/fever_symmetric_dev.jsonl"
TEST = "/TalSchuster/FeverSymmetric/abc/symmetric_v0.2/fever_symmetric_test.jsonl"
LICENCE = "/TalSchuster/FeverSymmetric/abc/DATA_LICENSE"


def pair(ident: str, claim: str, evidence: str, label: str) -> dict[str, Any]:
    return {"id": ident, "claim": claim, "evidence": evidence, "label": label, "gold_label": label}


def fixture_files() -> dict[str, bytes]:
    """Files in FEVER-Symmetric's format: original pairs and their synthetic variants."""
    lighthouse = "The lighthouse -LRB- built in 1902 -RRB- stands on the cape ."
    dev = [
        pair("101", "The lighthouse was built in 1902 .", lighthouse, "SUPPORTS"),
        pair("1010000002", "The lighthouse was built in 1950 .", lighthouse, "REFUTES"),
        pair("102", "The river flows north .", "The river flows south , to the sea .", "REFUTES"),
    ]
    test = [
        pair("203", "The bridge opened in 1880 .", "The bridge opened in 1880 .", "SUPPORTS"),
        pair("2030000003", "The bridge closed in 1880 .", "The bridge closed .", "SUPPORTS"),
    ]
    lines = [b"".join(json.dumps(r).encode() + b"\n" for r in part) for part in (dev, test)]
    return {DEV: lines[0], TEST: lines[1], LICENCE: b"Wikipedia text: CC BY-SA 3.0.\n"}


class FileServer:
    """Serves fixed files by path over HTTP on 127.0.0.1, honouring ``Range: bytes=N-``."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.ranges: list[str | None] = []
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
                start = int(re.fullmatch(r"bytes=(\d+)-", wanted)[1]) if wanted else 0  # type: ignore[index]
                self.send_response(206 if wanted else 200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                self.wfile.write(data[start:])

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"


@contextmanager
def serving(files: dict[str, bytes]) -> Iterator[FileServer]:
    server = FileServer(files)
    with serving_in_thread(server.http):
        yield server


def fixture_release() -> Release:
    """The fever-mini release with the fixtures' paths, sizes and digests."""
    downloads = tuple(
        Download(
            f"https://raw.githubusercontent.com{path}",
            path.rsplit("/", 1)[-1],
            hashlib.sha256(data).hexdigest(),
            len(data),
        )
        for path, data in fixture_files().items()
    )
    release = RELEASES["fever-mini"]
    return Release(
        source=release.source,
        licence=release.licence,
        files=release.files,
        downloads=downloads,
        build=build_fever_mini,
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty factdebate home, and a fever-mini release whose files are the fixtures."""
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FACTDEBATE_DATASETS", raising=False)
    monkeypatch.delenv("FACTDEBATE_DATASETS_MIRROR", raising=False)
    fixture = fixture_release()
    monkeypatch.setitem(RELEASES, "fever-mini", fixture)
    # downloads land in the home, never in a data folder beside the checkout
    assert download_root() == tmp_path / "home" / "datasets"
    return tmp_path / "home"


def get(mirror: str) -> Any:
    return CliRunner().invoke(app, ["datasets", "get", "fever-mini", "--mirror", mirror])


def test_get_downloads_checks_and_builds_the_fever_sample(home: Path) -> None:
    with serving(fixture_files()) as server:
        done = get(server.url)
        assert done.exit_code == 0, done.output
        folder = home / "datasets" / "fever" / "fever_rag_mini"
        assert f"ready in {folder}" in done.output.replace("\n", "")
        assert (folder / "DATA_LICENSE").read_bytes() == fixture_files()[LICENCE]  # attribution
        loaded = load_fever_mini()  # from the home: the default place
        claims = {item.id: item for item in loaded.items}
        assert sorted(claims) == ["101", "102", "203"]  # synthetic pairs left out
        assert claims["101"].claim == "The lighthouse was built in 1902."
        assert claims["101"].evidence[0]["text"] == (
            "The lighthouse (built in 1902) stands on the cape."
        )
        assert len(load_fever_mini_corpus()) == 3
        again = get(server.url)  # checked copies are not fetched twice
        assert again.exit_code == 0 and "already there, checked" in again.output
        assert len(server.ranges) == 3


def test_an_interrupted_download_resumes_from_its_partial_file(home: Path) -> None:
    folder = home / "datasets" / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    dev = fixture_files()[DEV]
    (folder / "fever_symmetric_dev.jsonl.part").write_bytes(dev[:100])
    with serving(fixture_files()) as server:
        done = get(server.url)
    assert done.exit_code == 0, done.output
    assert "bytes=100-" in server.ranges
    assert (folder / "fever_symmetric_dev.jsonl").read_bytes() == dev
    assert not list(folder.glob("*.part"))


def test_bytes_that_are_not_the_release_are_refused_and_removed(home: Path) -> None:
    files = fixture_files()
    files[DEV] = files[DEV].replace(b"north", b"south")  # same size, other digest
    with serving(files) as server:
        done = get(server.url)
    assert done.exit_code == 2
    assert "not the release's file" in done.output and "Traceback" not in done.output
    folder = home / "datasets" / "fever" / "fever_rag_mini"
    assert not (folder / "fever_symmetric_dev.jsonl").exists()
    assert not list(folder.glob("*.part")) and not (folder / "claims.jsonl").exists()


def test_an_unreachable_server_is_one_line() -> None:
    done = CliRunner().invoke(
        app, ["datasets", "get", "averitec", "--mirror", "http://127.0.0.1:9"]
    )
    assert done.exit_code == 2
    assert "cannot download http://127.0.0.1:9/MichSchli/AVeriTeC/" in done.output
    assert "run the command again to resume" in done.output


def test_a_release_fetched_by_hand_says_from_where(home: Path) -> None:
    done = CliRunner().invoke(app, ["datasets", "get", "feverous"])
    assert done.exit_code == 2
    assert "https://fever.ai" in done.output and "feverous_dev_challenges.jsonl" in done.output


def test_the_listing_names_every_dataset_with_its_source_licence_and_files(home: Path) -> None:
    done = CliRunner().invoke(app, ["datasets"], env={"COLUMNS": "300"})
    assert done.exit_code == 0, done.output
    assert f"`datasets get` writes into {home / 'datasets'}" in done.output
    for name, release in RELEASES.items():
        block = done.output[done.output.index(f"\n{name} (") :]
        for part in (release.source, release.licence, release.files[0]):
            assert part in block[:2000], (name, part)
    assert "factdebate datasets get fever-mini" in done.output


def test_every_dataset_has_a_release_and_every_download_is_pinned() -> None:
    assert set(RELEASES) == set(CATALOG)
    for name, release in RELEASES.items():
        assert release.source and release.licence and release.files, name
        assert release.downloads or release.how, name
        for item in release.downloads:
            assert item.url.startswith("https://") and item.size > 0, name
            assert re.fullmatch(r"[0-9a-f]{64}", item.sha256), name


def test_fever_text_reads_as_plain_text() -> None:
    assert plain_text("Paris -LRB- France -RRB- is n't small , it 's big .") == (
        "Paris (France) isn't small, it's big."
    )


def test_the_readme_bench_runs_on_a_fetched_sample_with_no_folder_beside_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's first bench command, after `datasets get`, on a fake provider."""
    monkeypatch.chdir(tmp_path)
    with serving(fixture_files()) as server:
        assert get(server.url).exit_code == 0
    with fake_provider(lambda prompt, body: "The sentence says so.\n**SUPPORTS**") as provider:
        done = CliRunner().invoke(
            app,
            ["bench", "--method", "cot", "--dataset", "fever-mini", "--limit", "3"]
            + ["--out", "runs/first-bench", "--model", provider.model()],
        )
    assert done.exit_code == 0, done.output
    metrics = json.loads((tmp_path / "runs/first-bench/metrics.json").read_text())
    assert metrics["n"] == 3 if "n" in metrics else True
    assert (tmp_path / "runs/first-bench/results.jsonl").read_text().count("\n") == 3


def test_a_missing_dataset_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTDEBATE_DATASETS", str(tmp_path / "none"))  # as on a fresh clone
    args = ["--dataset", "fever-mini", "--limit", "1", "--out", str(tmp_path / "run")]
    done = CliRunner().invoke(app, ["bench", "--method", "cot", *args])
    assert done.exit_code == 2
    assert "dataset file not found" in done.output
    assert "`factdebate datasets` says how to get each dataset" in done.output
    assert len(done.output.strip().splitlines()) == 1
