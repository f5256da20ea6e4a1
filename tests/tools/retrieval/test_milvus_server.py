"""Indexes on a real Milvus standalone server: HNSW, a manifest every worker reads, refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bounded import MODEL_GUARD_S, run_bounded, wait_bounded
from tests.conftest import REPO
from tests.milvus_server import MilvusServer, MilvusUnavailable, running_milvus

pytestmark = pytest.mark.service
CORPUS = [
    {"id": "saturn", "title": "Saturn", "text": "Saturn is a gas giant with rings of ice."},
    {"id": "basalt", "title": "Basalt", "text": "Basalt is a volcanic rock formed from lava."},
    {"id": "tides", "title": "Tides", "text": "Ocean tides are raised by the Moon's gravity."},
    {"id": "aurora", "title": "Aurora", "text": "Auroras glow when solar wind hits the air."},
]


@pytest.fixture(scope="module")
def server() -> Iterator[MilvusServer]:
    """One server for the module; a printed skip when it cannot start here."""
    try:
        with running_milvus() as started:
            yield started
    except MilvusUnavailable as exc:
        pytest.skip(f"no Milvus server: {exc}")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The FACTDEBATE_HOME of this machine, for the whole module."""
    path = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FACTDEBATE_HOME", str(path))
        yield path


@pytest.fixture(scope="module")
def shared(server: MilvusServer, home: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The corpus indexed through ``factdebate index --milvus-uri``; returns the collection."""
    from typer.testing import CliRunner

    from factdebate.cli import app

    corpus = tmp_path_factory.mktemp("corpus") / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    args = ["index", str(corpus), "--collection", "shared", "--milvus-uri", server.uri]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "indexed 4 documents as 4 passages" in result.output
    return "shared"


RETRIEVE = """
import json, sys
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.dispatch import run_tool
uri, engine = sys.argv[1], sys.argv[2]
out = {}
try:
    out["generation"] = live_manifest("shared", uri).generation
    tool = "search" if engine == "offline" else "rag"  # offline: BM25 standing in for the web
    hits = run_tool(tool, "rings of ice", k=2, collection="shared", milvus_uri=uri,
                    rag_engine=engine if tool == "rag" else "hybrid",
                    search_backend_name="offline")
    out["ids"] = [h["id"] for h in hits]
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def retrieve_elsewhere(home: Path, uri: str, engine: str) -> dict[str, Any]:
    """Retrieve from ``shared`` in a second process on ``home``; what it found or its error."""
    done = run_bounded(
        [sys.executable, "-c", RETRIEVE, uri, engine],
        capture_output=True,
        text=True,
        what="the CLI against a Milvus server",
        guard_s=MODEL_GUARD_S,
        env={**os.environ, "FACTDEBATE_HOME": str(home), "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_server_holds_an_hnsw_index_and_its_manifest(server: MilvusServer, shared: str) -> None:
    from pymilvus import MilvusClient

    from factdebate.tools.retrieval.manifest import manifest_path
    from factdebate.tools.retrieval.manifest_store import live_manifest, read_shared_manifest

    stored = json.loads(read_shared_manifest(shared, server.uri) or "{}")
    local = json.loads(manifest_path(shared).read_text())
    assert stored == local and stored["dense_index"] == "HNSW"
    # Milvus 2.3 has no BM25 function: the lexical index is bm25s shards (chosen by version)
    assert stored["lexical"] == "bm25s" and stored["milvus_version"].lstrip("v").startswith("2.3")
    manifest = live_manifest(shared, server.uri)
    info = MilvusClient(server.uri).describe_index(manifest.milvus_name, "vector")
    assert info["index_type"] == "HNSW" and info["indexed_rows"] == 4


async def test_both_debaters_retrieve_from_the_server(
    server: MilvusServer, shared: str, scripted: Any
) -> None:
    from factdebate.graphs.tool_mad import graph
    from factdebate.nodes.tool_mad.context import ToolMADContext
    from tests.fakes import ragas_rules

    claim = "Saturn has rings made of ice."
    name, _ = scripted(
        [
            *ragas_rules(relevant_question=claim),
            ("inside square brackets", "[Saturn rings ice]"),
            ("Decide whether the claim holds", "Document 1 says so.\n**SUPPORTS**"),
        ]
    )
    context = ToolMADContext(
        model=name,
        collection=shared,
        milvus_uri=server.uri,
        search_backend="offline",
        top_k=1,
        max_rounds=1,
    )
    out = await graph.ainvoke({"claim": claim}, context=context)
    assert out["verdict"] == "SUPPORTS" and out["errors"] == []
    evidence = {t["agent"]: [e["id"] for e in t["evidence"]] for t in out["transcript"]}
    assert evidence == {"debater_a": ["saturn"], "debater_b": ["saturn"]}


def test_a_second_process_and_a_second_machine_use_the_same_index(
    server: MilvusServer, shared: str, home: Path, tmp_path: Path
) -> None:
    from factdebate.tools.retrieval.manifest_store import live_manifest

    generation = live_manifest(shared, server.uri).generation
    same_machine = retrieve_elsewhere(home, server.uri, "hybrid")
    assert same_machine["generation"] == generation and same_machine["ids"][0] == "saturn"
    other = tmp_path / "other-machine"  # no local manifest, no lexical files
    other.mkdir()
    dense = retrieve_elsewhere(other, server.uri, "dense")
    assert dense["generation"] == generation and dense["ids"][0] == "saturn"
    hybrid = retrieve_elsewhere(other, server.uri, "hybrid")
    assert hybrid["generation"] == generation
    assert "IndexMismatchError" in hybrid["error"] and "not on this machine" in hybrid["error"]
    offline = retrieve_elsewhere(other, server.uri, "offline")  # follows the server's manifest
    assert "IndexMismatchError" in offline["error"] and "not on this machine" in offline["error"]
    assert retrieve_elsewhere(home, server.uri, "offline")["ids"][0] == "saturn"


def test_bm25_in_milvus_is_refused_on_a_server_without_full_text_search(
    server: MilvusServer, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(CORPUS[0]) + "\n")
    args = ["index", str(corpus), "--collection", "forced", "--milvus-uri", server.uri]
    result = CliRunner().invoke(app, [*args, "--lexical", "milvus"])
    assert result.exit_code == 2 and "has no full-text search" in result.output
    assert "2.5 or later" in result.output


def test_a_manifest_that_disagrees_with_the_server_is_refused(
    server: MilvusServer, shared: str, home: Path
) -> None:
    from factdebate.tools.retrieval.manifest_store import (
        live_manifest,
        read_shared_manifest,
        write_shared_manifest,
    )

    good = read_shared_manifest(shared, server.uri) or ""
    wrong = {**json.loads(good), "passages": 5}
    write_shared_manifest(shared, json.dumps(wrong), server.uri)
    try:
        refused = retrieve_elsewhere(home, server.uri, "dense")
        assert "IndexMismatchError" in refused["error"]
        assert "Milvus holds 4 passages" in refused["error"] and "5" in refused["error"]
        old = {**json.loads(good), "format": 1}
        write_shared_manifest(shared, json.dumps(old), server.uri)
        refused = retrieve_elsewhere(home, server.uri, "dense")
        assert "built by another version" in refused["error"]
    finally:
        write_shared_manifest(shared, good, server.uri)
    assert live_manifest(shared, server.uri).passages == 4


def test_two_machines_building_one_collection_store_each_row_once(
    server: MilvusServer, tmp_path: Path
) -> None:
    """Two `index` runs of one collection at once (two data homes): one builds, one is refused."""
    from factdebate.tools.retrieval.manifest_store import live_manifest
    from factdebate.tools.retrieval.milvus import count_rows

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": str(i), "text": f"Fact {i} about a thing."}) + "\n"
            for i in range(3000)
        )
    )
    runs = []
    for machine in ("a", "b"):
        home = tmp_path / machine
        home.mkdir()
        args = ["index", str(corpus), "--collection", "race", "--milvus-uri", server.uri]
        runs.append(
            subprocess.Popen(
                [sys.executable, "-c", "from factdebate.cli import app; app()", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "FACTDEBATE_HOME": str(home), "PYTHONPATH": str(REPO)},
            )
        )
    results = [
        (wait_bounded(run, what="a racing index build", guard_s=MODEL_GUARD_S), *run.communicate())
        for run in runs
    ]
    codes = sorted(code for code, _, _ in results)
    refused = [err for code, _, err in results if code == 2]
    assert codes == [0, 2], results
    assert "collection 'race' is being built by another process" in refused[0].replace("\n", "")
    assert "Traceback" not in refused[0]
    live = live_manifest("race", server.uri)
    assert (live.documents, count_rows(live.milvus_name, server.uri)) == (3000, 3000)
