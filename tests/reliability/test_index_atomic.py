"""Index builds are atomic and checked; names safe; a held, broken or all-bad index stops a run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from factdebate.cli import app
from factdebate.tools import dispatch
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import run_tool
from factdebate.tools.retrieval.index import build_index, index_ready
from factdebate.tools.retrieval.manifest import (
    IndexMismatchError,
    IndexUnavailableError,
    bm25_dir,
    check_name,
    manifest_path,
)
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.milvus import locked_client
from tests.bounded import COMMAND_GUARD_S, MODEL_GUARD_S, assert_prompt, communicate_bounded
from tests.conftest import REPO
from tests.reliability.bench_cli import runner


def corpus(prefix: str, n: int) -> list[Evidence]:
    return [
        Evidence(
            id=f"{prefix}{i}",
            title=f"{prefix} topic {i}",
            text=f"{prefix} document number {i} is about subject {prefix}{i}.",
            source="",
            score=0.0,
        )
        for i in range(n)
    ]


def search(collection: str, query: str) -> list[str]:
    hits = run_tool("search", query, k=3, collection=collection, search_backend_name="offline")
    return [h["id"] for h in hits]


def dense(collection: str, query: str) -> list[str]:
    return [h["id"] for h in run_tool("rag", query, k=3, collection=collection)]


@pytest.mark.parametrize(
    "name", ["../../x", "a/b", "", "1abc", "a__b", "a.b", "x" * 64, "mine\n", "é"]
)
def test_unsafe_collection_names_are_refused(name: str, data_home: Path) -> None:
    with pytest.raises(ValueError, match="bad collection name"):
        check_name(name)
    with pytest.raises(ValueError, match="bad collection name"):
        build_index(corpus("a", 1), name)
    assert not (data_home / "manifests").exists()


def test_cli_index_refuses_a_path_escape(tmp_path: Path, data_home: Path) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    file = tmp_path / "c.jsonl"
    file.write_text('{"id": "1", "text": "x"}\n')
    result = CliRunner().invoke(app, ["index", str(file), "--collection", "../../x"])
    assert result.exit_code == 2 and "bad collection name" in result.output
    assert not (tmp_path / "x").exists() and not data_home.exists()


def test_rebuild_swaps_and_cleans_the_old_generation(data_home: Path) -> None:
    build_index(corpus("alpha", 3), "swap")
    first = live_manifest("swap")
    build_index(corpus("beta", 4), "swap")
    second = live_manifest("swap")
    assert second.generation != first.generation and second.passages == 4
    assert not bm25_dir("swap", first.generation).exists()
    assert search("swap", "beta subject") and search("swap", "alpha") == []
    assert dense("swap", "beta document")[0].startswith("beta")


def test_failed_rebuild_keeps_the_previous_index(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTDEBATE_LEXICAL", "bm25s")  # its shards on disk are checked too
    build_index(corpus("alpha", 3), "keep")
    before = live_manifest("keep")

    def broken(name: str, passages: Any, uri: str = "", **_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("factdebate.tools.retrieval.index.build_collection", broken)
    with pytest.raises(OSError, match="disk full"):
        build_index(corpus("beta", 5), "keep")
    assert live_manifest("keep") == before
    assert sorted(p.name for p in (data_home / "bm25").iterdir()) == [f"keep__{before.generation}"]
    assert search("keep", "alpha subject") and dense("keep", "alpha document")


def test_manifest_mismatch_is_a_one_line_error(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTDEBATE_LEXICAL", "bm25s")  # the shards behind the manifest's back
    build_index(corpus("alpha", 3), "checked")
    manifest = live_manifest("checked")
    offsets = bm25_dir("checked", manifest.generation) / "offsets.u64"
    with offsets.open("r+b") as handle:  # another corpus behind the manifest's back
        handle.truncate(offsets.stat().st_size - 8)
    with pytest.raises(IndexMismatchError, match="does not match its manifest") as caught:
        search("checked", "alpha")
    assert "\n" not in str(caught.value)
    raw = json.loads(manifest_path("checked").read_text())
    manifest_path("checked").write_text(json.dumps({**raw, "format": 1}))
    with pytest.raises(IndexMismatchError, match="built by another version"):
        search("checked", "alpha")
    assert not index_ready("checked")


def test_milvus_rows_are_checked_against_the_manifest(data_home: Path) -> None:
    build_index(corpus("alpha", 3), "rows")
    raw = json.loads(manifest_path("rows").read_text())
    manifest_path("rows").write_text(json.dumps({**raw, "passages": 4}))
    with pytest.raises(IndexMismatchError):
        dense("rows", "alpha")


def test_a_node_does_not_debate_on_without_an_unusable_index() -> None:
    import asyncio

    from factdebate.nodes.context import Context
    from factdebate.nodes.retrieval import retrieve_or_record

    def held(query: str, k: int) -> list[Evidence]:
        raise IndexUnavailableError("cannot open the Milvus index at x: another process")

    def down(query: str, k: int) -> list[Evidence]:
        raise ConnectionError("search service down")

    dispatch.override_tool("rag", held)
    dispatch.override_tool("search", down)
    try:
        with pytest.raises(IndexUnavailableError):
            asyncio.run(retrieve_or_record(Context(), "rag", "q", agent="a", round_no=1))
        docs, errors = asyncio.run(
            retrieve_or_record(Context(), "search", "q", agent="a", round_no=1)
        )
        assert docs == [] and [e["kind"] for e in errors] == ["tool_error"]
    finally:
        dispatch.override_tool("rag", None)
        dispatch.override_tool("search", None)


def _python(
    code: str, home: Path, args: list[str] | None = None, **env: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *(args or [])],
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "FACTDEBATE_HOME": str(home),
            "HF_HUB_OFFLINE": "1",
            **env,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


HOLD = """
from pymilvus import MilvusClient
from factdebate.tools.retrieval.vectorstore import milvus_uri
client = MilvusClient(milvus_uri())
print("holding", flush=True)
import time; time.sleep(120)
"""


def test_a_collection_held_by_another_process_fails_after_a_bounded_wait(
    tmp_path: Path, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = _python(HOLD, data_home)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        monkeypatch.setenv("FACTDEBATE_INDEX_WAIT_S", "1")
        start = time.monotonic()
        with pytest.raises(IndexUnavailableError, match="another process may be using"):
            run_tool("rag", "anything", k=3, collection="default")
        assert_prompt(start, "a search on a held file with a 1 s wait")
        file = tmp_path / "c.jsonl"
        file.write_text('{"id": "1", "text": "The Sun is a star."}\n')
        cli = _python(
            f"from factdebate.cli import main; import sys; sys.argv = ['factdebate', 'index', "
            f"{str(file)!r}, '--collection', 'mine']; main()",
            data_home,
            FACTDEBATE_INDEX_WAIT_S="0",
        )
        output, _ = communicate_bounded(cli, what="index on a held file", guard_s=COMMAND_GUARD_S)
        assert cli.returncode == 2, output
        assert "error: cannot open the Milvus index" in output and "Traceback" not in output
    finally:
        holder.kill()
        holder.wait()


REINDEX = """
import sys, time
from factdebate.tools.retrieval.index import build_index
from factdebate.tools.core.records import Evidence

def progress(n):
    print("batch", flush=True)
    time.sleep(0.2)

prefix, count = sys.argv[1], int(sys.argv[2])
docs = [
    Evidence(id=f"{prefix}{i}", title=f"{prefix} {i}", text=f"{prefix} text {i} about {prefix}{i}.",
             source="", score=0.0)
    for i in range(count)
]
print("start", flush=True)
build_index(docs, "killed", progress=progress)
print("done", flush=True)
"""


def test_reindex_killed_at_a_random_point_leaves_the_previous_index_usable(
    data_home: Path,
) -> None:
    # Milvus Lite lets one process hold its file: both builds run in children, and this
    # process opens the index only after the second child is killed.
    first = _python(REINDEX, data_home, args=["old", "5"])
    output, _ = communicate_bounded(first, what="the first index build", guard_s=MODEL_GUARD_S)
    assert first.returncode == 0 and "done" in output, output
    before = live_manifest("killed")
    rng = random.Random()
    batches = rng.randint(0, 4)  # kill before embedding, or after 1-4 of the 5 batches
    child = _python(REINDEX, data_home, args=["new", "600"])
    assert child.stdout is not None
    lines = (line.strip() for line in child.stdout)
    assert next(line for line in lines if line in ("start", "done")) == "start"
    for _ in range(batches):
        assert next(line for line in lines if line in ("batch", "done")) == "batch"
    time.sleep(rng.uniform(0.0, 0.2))
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert live_manifest("killed") == before  # the swap never happened
    assert search("killed", "old text") and search("killed", "new") == []
    assert dense("killed", "old text")[0].startswith("old")
    build_index(corpus("next", 2), "killed")  # and the next build clears what was left
    live = live_manifest("killed")
    if live.lexical == "bm25s":
        assert [p.name for p in (data_home / "bm25").iterdir()] == [f"killed__{live.generation}"]
    with locked_client() as client:
        assert [n for n in client.list_collections() if n.startswith("killed")] == [
            live.milvus_name
        ]


def test_load_documents_reports_each_bad_line(tmp_path: Path) -> None:
    from factdebate.tools.retrieval.corpus import CorpusError, load_documents

    file = tmp_path / "c.jsonl"
    file.write_bytes(
        b'{"id": "1", "title": "Sun", "text": "The Sun is a star."}\n'
        b'{"id": "2", "text": "caf\xe9 latte"}\n'  # Latin-1, not UTF-8
        b'{"id": "3", "text": \n'
        b'{"id": "4", "text": null}\n'
        b'{"id": "1", "text": "again"}\n'
        b'["a list"]\n'
        b'{"id": "5", "title": "Moon", "text": "The Moon orbits Earth."}\n'
    )
    skipped: list[str] = []
    docs = load_documents(file, skipped=skipped)
    assert [d["id"] for d in docs] == ["1", "5"]
    assert [s.split(": ", 1)[0] for s in skipped] == [f"{file}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "not UTF-8" in skipped[0] and "not JSON" in skipped[1] and "text" in skipped[2]
    assert "duplicate document id '1'" in skipped[3] and "JSON object" in skipped[4]
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: not UTF-8"):
        load_documents(file)  # strict when no report is asked for
    with pytest.raises(CorpusError, match="not a regular file"):
        load_documents(Path("/dev/zero"))


def test_cli_index_indexes_valid_records_and_names_skipped_ones(
    tmp_path: Path, data_home: Path
) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    file = tmp_path / "c.jsonl"
    file.write_bytes(
        b'{"id": "1", "title": "Sun", "text": "The Sun is a star."}\n'
        b'{"id": "2", "text": "\xff\xfe"}\n'
        b"not json\n"
        b'{"id": "3", "title": "Moon", "text": "The Moon orbits Earth."}\n'
    )
    result = CliRunner().invoke(app, ["index", str(file), "--collection", "mixed"])
    assert result.exit_code == 0, result.output
    assert f"skipped {file}:2: not UTF-8" in result.output
    assert f"skipped {file}:3: not JSON" in result.output
    assert "skipped 2 bad record(s)" in result.output and "indexed 2 documents" in result.output
    assert search("mixed", "moon") == ["3"]


def test_long_ids_that_differ_late_stay_two_documents(data_home: Path) -> None:
    """Two ids of over 512 characters that differ only at the end once collapsed into one row."""
    stem = "x" * 600
    docs = [
        Evidence(
            id=stem + "A", title="Alpha", text="Alpha pears grow in orchards.", source="", score=0.0
        ),
        Evidence(
            id=stem + "B", title="Beta", text="Beta plums ripen in August.", source="", score=0.0
        ),
    ]
    build_index(docs, "longids", "")
    assert sorted(dense("longids", "pears and plums")) == [stem + "A", stem + "B"]
    assert sorted(search("longids", "pears plums")) == [stem + "A", stem + "B"]


def climate_fever_like(tmp_path: Path) -> Path:
    """A corpus whose every record names its id ``doc_id`` (as Climate-FEVER's does)."""
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"doc_id": f"d{i}", "title": "T", "text": "Some text."} for i in range(5)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return corpus


@pytest.mark.usefixtures("data_home")
def test_loading_a_corpus_with_every_record_bad_says_why(tmp_path: Path) -> None:
    from factdebate.tools.retrieval.corpus import CorpusError, load_documents

    corpus = climate_fever_like(tmp_path)
    with pytest.raises(CorpusError) as caught:
        load_documents(corpus, skipped=[])
    message = str(caught.value)
    assert message.startswith(f"no documents found in {corpus}")
    assert f"{corpus}:1: missing or empty id" in message and "\n" not in message


@pytest.mark.usefixtures("data_home")
def test_index_with_every_record_bad_names_file_and_line(tmp_path: Path) -> None:
    corpus = climate_fever_like(tmp_path)
    result = runner.invoke(app, ["index", str(corpus), "--collection", "allbad"])
    assert result.exit_code == 2, result.output  # nothing to index: a one-line error
    assert f"{corpus}:1: missing or empty id" in result.output.replace("\n", "")
    assert "Traceback" not in result.output
