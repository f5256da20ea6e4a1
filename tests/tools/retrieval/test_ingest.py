"""Streaming ingestion: every corpus format, FEVER and KILT fixtures answering a claim, resume."""

from __future__ import annotations

import gzip
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from factdebate.tools.retrieval.corpus import (
    CorpusError,
    count_records,
    detect_format,
    iter_documents,
)
from factdebate.tools.retrieval.index import split_passages
from factdebate.tools.retrieval.lexical import PassageStore
from factdebate.tools.retrieval.manifest import bm25_dir, corpus_hash
from factdebate.tools.retrieval.manifest_store import live_manifest
from tests.bounded import MODEL_GUARD_S, communicate_bounded, run_bounded
from tests.conftest import REPO

FEVER_PAGES = [
    {"id": "", "text": "", "lines": ""},  # the dump's first record
    {
        "id": "Nikolaj_Coster-Waldau",
        "text": "Nikolaj Coster-Waldau is a Danish actor .",
        "lines": "0\tNikolaj Coster-Waldau -LRB- born 27 July 1970 -RRB- is a Danish actor and "
        "producer .\tDanish\tDenmark\n1\tHe graduated from the Danish National School of "
        "Performing Arts in Copenhagen in 1993 .\n2\t",
    },
    {"id": "Empty_page", "text": "", "lines": "0\t"},
    {
        "id": "Saturn",
        "text": "Saturn is the sixth planet .",
        "lines": "0\tSaturn is the sixth planet from the Sun and the second-largest in the Solar "
        "System .\n1\tIts rings are made mostly of ice particles .",
    },
]
KILT_PAGES = [
    {
        "wikipedia_id": "290",
        "wikipedia_title": "Aurora",
        "text": [
            "Aurora\n",
            "An aurora is a natural light display in the sky, seen mostly near the poles.\n",
            "Section::::Causes.\n",
            "BULLET::::- Auroras are caused by charged solar wind particles hitting the "
            "upper atmosphere.\n",
        ],
    },
    {
        "wikipedia_id": "12",
        "wikipedia_title": "Basalt",
        "text": ["Basalt\n", "Basalt is a fine-grained volcanic rock formed from lava.\n"],
    },
]


def write_jsonl(path: Path, records: list[dict[str, Any]], gz: bool = False) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def fever_dump(root: Path) -> Path:
    """A two-shard ``wiki-pages`` folder, as FEVER ships it."""
    folder = root / "wiki-pages"
    write_jsonl(folder / "wiki-001.jsonl", FEVER_PAGES[:2])
    write_jsonl(folder / "wiki-002.jsonl", FEVER_PAGES[2:])
    return folder


def test_fever_pages_become_documents_of_sentence_lines(tmp_path: Path) -> None:
    folder = fever_dump(tmp_path)
    assert detect_format(folder) == "fever"
    docs = list(iter_documents(folder))
    assert [d["id"] for d in docs] == ["Nikolaj_Coster-Waldau", "Saturn"]  # empty pages dropped
    nikolaj = docs[0]
    assert nikolaj["title"] == "Nikolaj Coster-Waldau"
    assert nikolaj["text"].split("\n") == [
        "Nikolaj Coster-Waldau (born 27 July 1970) is a Danish actor and producer.",
        "He graduated from the Danish National School of Performing Arts in Copenhagen in 1993.",
    ]  # hyperlink columns dropped, the dump's escapes restored
    assert count_records(folder) == 4


def test_long_fever_page_splits_at_sentence_lines(tmp_path: Path) -> None:
    sentences = [f"Sentence number {i} of a long page about the Moon ." for i in range(80)]
    lines = "\n".join(f"{i}\t{s}" for i, s in enumerate(sentences))
    write_jsonl(tmp_path / "w" / "wiki-001.jsonl", [{"id": "Moon", "text": "", "lines": lines}])
    passages = split_passages(iter_documents(tmp_path / "w"))
    assert len(passages) > 1
    for passage in passages:
        restored = {s.replace(" .", ".") for s in sentences}  # the dump's spacing undone
        assert set(passage["text"].split("\n")) <= restored  # whole sentences only


def test_kilt_pages_join_paragraphs_without_markup(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "kilt_knowledgesource.json.gz", KILT_PAGES, gz=True)
    assert detect_format(file) == "kilt"
    docs = list(iter_documents(file))
    assert [(d["id"], d["title"]) for d in docs] == [("290", "Aurora"), ("12", "Basalt")]
    assert docs[0]["text"] == (
        "An aurora is a natural light display in the sky, seen mostly near the poles.\n\n"
        "- Auroras are caused by charged solar wind particles hitting the upper atmosphere."
    )


def test_jsonl_gz_parquet_and_shard_folders_read_alike(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [{"id": f"d{i}", "title": f"T{i}", "text": f"text {i}"} for i in range(2500)]
    write_jsonl(tmp_path / "plain.jsonl", records)
    write_jsonl(tmp_path / "packed.jsonl.gz", records, gz=True)
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "table.parquet")
    shards = tmp_path / "shards"
    write_jsonl(shards / "part-0.jsonl.gz", records[:1000], gz=True)
    write_jsonl(shards / "part-1.jsonl", records[1000:])
    expected = [(r["id"], r["title"], r["text"]) for r in records]
    for path, fmt in (
        (tmp_path / "plain.jsonl", "jsonl"),
        (tmp_path / "packed.jsonl.gz", "jsonl"),
        (tmp_path / "table.parquet", "parquet"),
        (shards, "jsonl"),
    ):
        assert detect_format(path) == fmt
        got = [(d["id"], d["title"], d["text"]) for d in iter_documents(path)]
        assert got == expected, path
        assert count_records(path) == len(records)


def test_bad_records_are_reported_and_format_names_checked(tmp_path: Path) -> None:
    file = tmp_path / "c.jsonl"
    file.write_bytes(b'{"id": "1", "text": "ok"}\n{"id": "1", "text": "again"}\n{"id": 2}\n')
    problems: list[str] = []
    assert [d["id"] for d in iter_documents(file, problem=problems.append)] == ["1"]
    assert problems == [
        f"{file}:2: duplicate document id '1'",
        f"{file}:3: missing or empty text (a string)",
    ]
    with pytest.raises(CorpusError, match="unknown corpus format 'csv'"):
        list(iter_documents(file, "csv"))
    with pytest.raises(CorpusError, match="no such file"):
        list(iter_documents(tmp_path / "missing.jsonl"))


RESUMABLE = """
import json, sys, time
import factdebate.tools.retrieval.index as index
from factdebate.tools.retrieval.corpus import iter_documents
from factdebate.tools.retrieval.index import ingest, path_source

index.BATCH = 16  # many small steps, so a kill lands mid-build
path, pause = sys.argv[1], float(sys.argv[2])

def step(documents, passages):
    print("batch", documents, passages, flush=True)
    time.sleep(pause)

def encode(texts):  # a cheap stand-in encoder: the count check is about the store path
    return [[float(len(t) % 7 + 1), float(sum(map(ord, t)) % 11 + 1)] + [1.0] * 382 for t in texts]

manifest = ingest(iter_documents(__import__("pathlib").Path(path)), "resumed",
                  source=path_source(__import__("pathlib").Path(path), "auto"),
                  on_batch=step, encode=encode, checkpoint_s=0)
print("done", manifest.passages, flush=True)
"""


def _child(data_home: Path, *args: str, lexical: str = "auto") -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "FACTDEBATE_HOME": str(data_home),
        "PYTHONPATH": str(REPO),
        "FACTDEBATE_LEXICAL": lexical,
    }
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(RESUMABLE), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


STORED = """
import json
from factdebate.tools.retrieval.milvus import milvus_client, milvus_uri
from factdebate.tools.retrieval.manifest_store import live_manifest
m = live_manifest('resumed'); c = milvus_client(milvus_uri()); c.load_collection(m.milvus_name)
rows = c.query(m.milvus_name, filter='id >= 0', output_fields=['id', 'doc', 'title', 'text'],
               limit=16384)
ids = [r['id'] for r in rows]
print(len(ids), len(set(ids)), min(ids), max(ids), m.lexical)
print(json.dumps([[r['doc'], r['title'], r['text']] for r in sorted(rows, key=lambda r: r['id'])]))
"""


@pytest.mark.parametrize("lexical", ["bm25s", "milvus"])
def test_sigkilled_ingest_resumes_without_losing_or_duplicating_a_passage(
    tmp_path: Path, data_home: Path, lexical: str
) -> None:
    rng = random.Random()
    records = [
        {
            "id": f"d{i}",
            "title": f"Doc {i}",
            "text": f"Words of document {i}. " * rng.randint(1, 150),
        }
        for i in range(240)
    ]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", records)
    expected = split_passages(iter_documents(corpus))
    assert len(expected) > 240  # some documents are several passages
    first = _child(data_home, str(corpus), "0.15", lexical=lexical)
    assert first.stdout is not None
    seen, kill_after = 0, rng.randint(3, 8)
    for line in first.stdout:
        if line.startswith("batch"):
            seen += 1
            if seen == kill_after:
                break
    assert seen == kill_after, "the build ended before the kill"
    first.send_signal(signal.SIGKILL)  # mid-build, between or inside steps
    first.wait()
    with pytest.raises(Exception):  # noqa: B017 - never swapped in: no live index
        live_manifest("resumed")
    checkpoint = json.loads((data_home / "builds" / "resumed.json").read_text())
    assert 0 < checkpoint["passages"] < len(expected)
    second = _child(data_home, str(corpus), "0", lexical=lexical)
    output, _ = communicate_bounded(second, what="the second index build", guard_s=MODEL_GUARD_S)
    assert second.returncode == 0, output
    lines = output.splitlines()
    assert lines[0] == f"batch {checkpoint['documents']} {checkpoint['passages']}", output
    assert lines[-1] == f"done {len(expected)}"
    manifest = live_manifest("resumed")
    assert manifest.generation == checkpoint["generation"]  # resumed, not restarted
    assert manifest.lexical == lexical
    if lexical == "bm25s":
        store = PassageStore(bm25_dir("resumed", manifest.generation))
        assert list(store) == expected  # every passage once, in corpus order
    else:  # nothing on disk: Milvus holds the texts and the BM25 index
        assert not (data_home / "bm25").exists()
    assert manifest.corpus_sha256 == corpus_hash(expected)
    assert not (data_home / "builds" / "resumed.json").exists()
    counted = run_bounded(
        [sys.executable, "-c", textwrap.dedent(STORED)],
        capture_output=True,
        text=True,
        env={**os.environ, "FACTDEBATE_HOME": str(data_home), "PYTHONPATH": str(REPO)},
        what="the index child",
        guard_s=MODEL_GUARD_S,
    )
    n = len(expected)
    summary, rows = counted.stdout.splitlines()[-2:]
    assert summary.split() == [str(n), str(n), "0", str(n - 1), lexical], counted.stderr
    assert json.loads(rows) == [[p["doc"], p["title"], p["text"]] for p in expected]


def test_cli_indexes_a_fever_dump_and_a_kilt_file(tmp_path: Path, data_home: Path) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app
    from factdebate.tools.dispatch import run_tool

    runner = CliRunner()
    result = runner.invoke(app, ["index", str(fever_dump(tmp_path)), "--collection", "fever"])
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents as 2 passages into collection 'fever'" in result.output
    kilt = write_jsonl(tmp_path / "kilt.jsonl", KILT_PAGES)
    result = runner.invoke(app, ["index", str(kilt), "--collection", "kilt", "--format", "kilt"])
    assert result.exit_code == 0, result.output
    hits = run_tool("rag", "Which planet has rings of ice?", k=1, collection="fever")
    assert [h["id"] for h in hits] == ["Saturn"]
    hits = run_tool(
        "search", "charged solar wind", k=1, collection="kilt", search_backend_name="offline"
    )
    assert [h["id"] for h in hits] == ["290"]
    refused = runner.invoke(app, ["index", str(kilt), "--collection", "x", "--format", "csv"])
    assert refused.exit_code == 2 and "unknown --format 'csv'" in refused.output


@pytest.mark.parametrize("fixture", ["fever", "kilt"])
async def test_fixture_corpus_answers_a_claim_with_both_debaters(
    fixture: str, tmp_path: Path, data_home: Path, scripted: Any
) -> None:
    from factdebate.graphs.tool_mad import graph
    from factdebate.nodes.tool_mad.context import ToolMADContext
    from factdebate.tools.retrieval.index import index_path
    from tests.fakes import ragas_rules

    path = (
        fever_dump(tmp_path)
        if fixture == "fever"
        else write_jsonl(tmp_path / "k.jsonl", KILT_PAGES)
    )
    index_path(path, fixture)
    claim, gold = {
        "fever": ("Nikolaj Coster-Waldau is a Danish actor.", "Nikolaj_Coster-Waldau"),
        "kilt": ("Auroras are caused by charged particles from the Sun.", "290"),
    }[fixture]
    name, model = scripted(
        [
            *ragas_rules(relevant_question=claim),
            ("inside square brackets", f"[{claim}]"),
            ("Decide whether the claim holds", "The document states it.\n**SUPPORTS**"),
        ]
    )
    context = ToolMADContext(
        model=name, collection=fixture, search_backend="offline", top_k=1, max_rounds=1
    )
    out = await graph.ainvoke({"claim": claim}, context=context)
    assert out["verdict"] == "SUPPORTS" and out["errors"] == []
    evidence = {t["agent"]: [e["id"] for e in t["evidence"]] for t in out["transcript"]}
    assert evidence == {"debater_a": [gold], "debater_b": [gold]}  # rag and BM25 search


def test_a_server_token_reaches_the_client_and_lite_ignores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pymilvus

    from factdebate.tools.retrieval import milvus

    opened: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(pymilvus, "MilvusClient", lambda uri, **kw: opened.append((uri, kw)))
    monkeypatch.setenv(milvus.TOKEN_ENV, "reader:s3cret-pass")
    milvus._open("http://127.0.0.1:1")
    milvus._open("/tmp/lite.db")
    assert opened == [
        ("http://127.0.0.1:1", {"token": "reader:s3cret-pass"}),
        ("/tmp/lite.db", {"grpc_options": milvus.LITE_GRPC}),  # no token; no idle pings
    ]


def test_pypi_milvus_servers_take_turns_on_one_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import milvus_server

    monkeypatch.setattr(milvus_server, "LAUNCHER", Path(sys.executable))  # no server is started
    monkeypatch.setattr(milvus_server, "LOCK", tmp_path / "milvus.lock")
    monkeypatch.setattr(milvus_server, "LOCK_WAIT_S", 0.5)
    monkeypatch.setattr(milvus_server, "ETCD_PEER_PORT", milvus_server.free_port())
    first = milvus_server.MilvusServer(tmp_path / "a")
    second = milvus_server.MilvusServer(tmp_path / "b")
    first._take_lock()
    with pytest.raises(milvus_server.MilvusUnavailable, match="another PyPI Milvus server"):
        second._take_lock()
    first._release()
    second._take_lock()  # free again once the first one stopped
    second._release()


def test_progress_moves_within_a_step_of_passages(data_home: Path) -> None:
    """Each encoder call reports the documents and passages done, before the step is stored."""
    from factdebate.tools.retrieval.index import EMBED_BATCH, ingest

    docs = [
        {"id": str(i), "title": f"Page {i}", "text": f"Fact number {i}.", "url": "", "source": ""}
        for i in range(300)  # one passage each: a single step of 300 passages
    ]
    events: list[tuple[str, int, int]] = []

    def encode(texts: list[str]) -> list[list[float]]:
        events.append(("encode", len(texts), 0))
        return [[float(len(t) % 5 + 1)] + [1.0] * 383 for t in texts]

    ingest(
        docs,  # type: ignore[arg-type]
        "within",
        source="within-test",
        encode=encode,
        on_batch=lambda d, p: events.append(("stored", d, p)),
        on_embedded=lambda d, p: events.append(("embedded", d, p)),
    )
    embedded = [(d, p) for kind, d, p in events if kind == "embedded"]
    assert embedded == [(EMBED_BATCH, EMBED_BATCH), (2 * EMBED_BATCH, 2 * EMBED_BATCH), (300, 300)]
    first = events.index(("embedded", EMBED_BATCH, EMBED_BATCH))
    assert events[first - 1][0] == "encode"  # told right after the first encoder call
    assert events.index(("stored", 300, 300)) > first  # long before the step is stored


@pytest.mark.parametrize(
    ("dumped", "shown"),
    [
        (
            "Carlos Santana -LRB- -LSB- siˈmon -RSB- ; born July 20 , 1947 -RRB- is a guitarist .",
            "Carlos Santana ([siˈmon]; born July 20, 1947) is a guitarist.",
        ),
        (
            "He said `` no '' and did n't go ; it 's 50 % .",
            "He said \"no\" and didn't go; it's 50%.",
        ),
        ("Genre -COLON- rock , pop ! Ratio 3 : 2 ?", "Genre: rock, pop! Ratio 3 : 2?"),
        ("Plain text, already clean.", "Plain text, already clean."),
    ],
)
def test_fever_text_restores_the_dumps_escapes(dumped: str, shown: str) -> None:
    from factdebate.tools.retrieval.corpus import fever_text

    assert fever_text(dumped) == shown
