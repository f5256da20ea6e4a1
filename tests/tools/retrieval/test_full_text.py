"""BM25 inside Milvus (Milvus Lite 3 here): the engine rule, stemming, refusals, one index
every later process uses with nothing but the Lite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import hybrid_search, run_tool
from factdebate.tools.retrieval.full_text import has_full_text, has_function, lexical_for
from factdebate.tools.retrieval.index import build_index
from factdebate.tools.retrieval.manifest import (
    MILVUS_ANALYZER,
    IndexMismatchError,
    bm25_dir,
    manifest_path,
)
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.milvus import locked_client
from tests.bounded import MODEL_GUARD_S, run_bounded
from tests.conftest import REPO

CORPUS = [
    {"id": "saturn", "title": "Saturn", "text": "Saturn is a gas giant with rings of ice."},
    {"id": "basalt", "title": "Basalt", "text": "Basalt is a volcanic rock formed from lava."},
    {"id": "tides", "title": "Tides", "text": "Ocean tides are raised by the Moon's gravity."},
    {"id": "aurora", "title": "Aurora", "text": "Auroras glow when solar wind hits the air."},
    {"id": "kinase", "title": "Kinases", "text": "Aspirin inhibits the growth of tumour cells."},
]


def docs() -> list[Evidence]:
    return [Evidence(**r, source="", score=0.0) for r in CORPUS]  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("version", "auto", "full_text"),
    [
        ("milvus_lite-3.2.2", "milvus", True),
        ("v2.5.4", "milvus", True),
        ("2.6.0", "milvus", True),
        ("v2.3.5", "bm25s", False),
        ("v2.4.15", "bm25s", False),
        ("milvus_lite-2.4.12", "bm25s", False),
        ("", "bm25s", False),
    ],
)
def test_the_milvus_version_picks_the_lexical_engine(
    version: str, auto: str, full_text: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FACTDEBATE_LEXICAL", raising=False)
    assert has_full_text(version) is full_text
    assert lexical_for(version) == auto == lexical_for(version, "auto")
    assert lexical_for(version, "bm25s") == "bm25s"  # forced: any version keeps shards
    if full_text:
        assert lexical_for(version, "milvus") == "milvus"
    else:
        with pytest.raises(SettingsError, match="no full-text search") as refused:
            lexical_for(version, "milvus")
        assert "\n" not in str(refused.value)
    monkeypatch.setenv("FACTDEBATE_LEXICAL", "bm25s")
    assert lexical_for(version) == "bm25s"
    with pytest.raises(SettingsError, match="unknown lexical engine 'sparse'"):
        lexical_for(version, "sparse")


def test_bm25_in_milvus_stems_and_reads_texts_from_milvus(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FACTDEBATE_LEXICAL", raising=False)
    build_index(docs(), "sky")  # Milvus Lite 3: BM25 goes into Milvus by default
    manifest = live_manifest("sky")
    assert (manifest.lexical, manifest.analyzer) == ("milvus", MILVUS_ANALYZER)
    assert manifest.milvus_version.startswith("milvus_lite-3")
    assert not bm25_dir("sky", manifest.generation).exists()
    with locked_client() as client:
        assert has_function(client.describe_collection(manifest.milvus_name))
    # Milvus Lite's own analyzer does not stem; terms analysed before Milvus are stemmed
    found = run_tool("search", "inhibition", k=3, collection="sky", search_backend_name="offline")
    assert [(h["id"], h["text"], h["source"]) for h in found] == [
        ("kinase", CORPUS[4]["text"], "bm25")
    ]
    assert found[0]["score"] > 0  # BM25 scores shown positive (Milvus Lite negates them)
    hits = run_tool("rag", "What raises the ocean tides?", k=3, collection="sky")
    assert hits[0]["id"] == "tides" and hits[0]["text"] == CORPUS[2]["text"]
    assert len({h["id"] for h in hits}) == 3 and {h["source"] for h in hits} == {"hybrid"}
    # a query of stopwords only: nothing lexical, the dense half still ranks
    assert run_tool("search", "the of and", k=3, collection="sky") == []
    assert len(run_tool("rag", "the of and", k=3, collection="sky")) == 3
    with pytest.raises(SettingsError, match="equal weights"):
        hybrid_search("sky", "tides", 3, dense_weight=2.0)


def test_a_manifest_that_disagrees_with_the_collection_is_refused(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTDEBATE_LEXICAL", "bm25s")
    build_index(docs(), "plain")  # no BM25 function in Milvus
    monkeypatch.setenv("FACTDEBATE_LEXICAL", "milvus")
    build_index(docs(), "counted")
    raw = json.loads(manifest_path("plain").read_text())
    manifest_path("plain").write_text(
        json.dumps({**raw, "lexical": "milvus", "analyzer": MILVUS_ANALYZER})
    )
    with pytest.raises(IndexMismatchError, match="has no BM25 function") as refused:
        run_tool("rag", "tides", k=2, collection="plain")
    assert "\n" not in str(refused.value)
    raw = json.loads(manifest_path("counted").read_text())
    manifest_path("counted").write_text(json.dumps({**raw, "passages": 6}))
    with pytest.raises(IndexMismatchError, match="Milvus holds 5 passages"):
        run_tool("search", "tides", k=2, collection="counted", search_backend_name="offline")
    manifest_path("counted").write_text(json.dumps({**raw, "lexical": "lucene"}))
    with pytest.raises(IndexMismatchError, match="unknown lexical engine 'lucene'"):
        run_tool("rag", "tides", k=2, collection="counted")


def test_cli_index_refuses_an_unknown_lexical_engine(tmp_path: Path, data_home: Path) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    file = tmp_path / "c.jsonl"
    file.write_text('{"id": "1", "text": "x"}\n')
    result = CliRunner().invoke(app, ["index", str(file), "--lexical", "sparse"])
    assert result.exit_code == 2 and "unknown lexical engine 'sparse'" in result.output
    assert not (data_home / "manifests").exists()


ELSEWHERE = """
import json, sys
from factdebate.tools.dispatch import run_tool
from factdebate.tools.retrieval.manifest_store import live_manifest
uri, debate = sys.argv[1], sys.argv[2] == "debate"
manifest = live_manifest("shared", uri)
out = {"manifest": [manifest.generation, manifest.lexical, manifest.milvus_version]}
for tool, engine in (("rag", "hybrid"), ("rag", "dense"), ("search", "hybrid")):
    hits = run_tool(tool, "rings of ice", k=3, collection="shared", milvus_uri=uri,
                    rag_engine=engine, search_backend_name="offline")
    out[f"{tool}-{engine}"] = [[h["id"], h["title"], h["text"]] for h in hits]
if debate:
    from factdebate.api import verify
    from factdebate.tools.models.providers import register_model
    from tests.fakes import ScriptedChatModel, ragas_rules
    claim = "Saturn has rings made of ice."
    model = ScriptedChatModel(rules=[
        *ragas_rules(relevant_question=claim),
        ("inside square brackets", "[Saturn rings ice]"),
        ("Decide whether the claim holds", "Document 1 says so.\\n**SUPPORTS**"),
    ])
    name = register_model("scripted-lite", model)
    result = verify(claim, "tool-mad", model=name, collection="shared", milvus_uri=uri,
                    search_backend="offline", top_k=1, max_rounds=1)
    out["verdict"], out["errors"] = result["verdict"], result["errors"]
    out["evidence"] = {t["agent"]: [[e["id"], e["source"]] for e in t["evidence"]]
                       for t in result["transcript"]}
print(json.dumps(out))
"""


def _python(home: Path, *args: str, code: str = ELSEWHERE) -> subprocess.CompletedProcess[str]:
    return run_bounded(
        [sys.executable, *args] if not code else [sys.executable, "-c", code, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        what="the full-text child",
        guard_s=MODEL_GUARD_S,
        env={
            **{k: v for k, v in os.environ.items() if k != "FACTDEBATE_LEXICAL"},
            "FACTDEBATE_HOME": str(home),
            "PYTHONPATH": str(REPO),
            "HF_HUB_OFFLINE": "1",
        },
    )


def _found(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_later_process_with_an_empty_home_uses_the_lite_file_alone(tmp_path: Path) -> None:
    """Built by `factdebate index --milvus-uri FILE`; read by later processes, one at a time."""
    corpus, lite = tmp_path / "c.jsonl", tmp_path / "shared.db"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    builder = tmp_path / "builder"
    index = ["-m", "factdebate.cli", "index", str(corpus), "--collection", "shared"]
    built = _python(builder, *index, "--milvus-uri", str(lite), code="")
    assert built.returncode == 0, built.stderr[-3000:]
    assert "indexed 5 documents as 5 passages" in built.stdout
    assert not (builder / "bm25").exists()  # nothing lexical kept on the building machine
    there = _found(_python(builder, str(lite), "retrieve"))
    empty = tmp_path / "empty-home"
    later = _found(_python(empty, str(lite), "debate"))
    assert later["manifest"] == there["manifest"]
    assert later["manifest"][1:] == ["milvus", "milvus_lite-3.2.2"]
    for engine in ("rag-hybrid", "rag-dense", "search-hybrid"):
        assert later[engine] == there[engine], engine  # the same passages, texts from Milvus
        assert later[engine][0][0] == "saturn", engine
    assert later["search-hybrid"][0][2] == CORPUS[0]["text"]
    # Tool-MAD, default rag_engine=hybrid: both debaters retrieve through the Lite file
    assert later["verdict"] == "SUPPORTS" and later["errors"] == []
    assert later["evidence"] == {
        "debater_a": [["saturn", "hybrid"]],
        "debater_b": [["saturn", "bm25"]],
    }
    assert not (empty / "bm25").exists() and not (empty / "manifests").exists()


GENERATION = """
import sys
from factdebate.tools.retrieval.manifest_store import live_manifest
try:
    print(live_manifest("shared", sys.argv[1]).generation)
except Exception as exc:
    print(type(exc).__name__)
"""
FORGET = """
import sys
from pymilvus import MilvusClient
MilvusClient(sys.argv[1]).drop_collection("factdebate_manifests")
"""


def test_the_lite_files_own_manifest_counts_over_a_home_copy(tmp_path: Path) -> None:
    corpus, lite, other = tmp_path / "c.jsonl", tmp_path / "shared.db", tmp_path / "other.db"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    index = ["-m", "factdebate.cli", "index", str(corpus), "--collection", "shared"]
    first, second = tmp_path / "first", tmp_path / "second"
    for home in (first, second):  # two homes build into one file: first's copy goes stale
        done = _python(home, *index, "--milvus-uri", str(lite), code="")
        assert done.returncode == 0, done.stderr[-3000:]
    stale = json.loads((first / "manifests" / "shared.json").read_text())
    newest = json.loads((second / "manifests" / "shared.json").read_text())
    assert stale["generation"] != newest["generation"] and stale["milvus_uri"] == str(lite)

    def generation(home: Path) -> str:
        done = _python(home, str(lite), code=GENERATION)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()[-1]

    assert generation(first) == newest["generation"]  # read from the file, not the copy
    # a Lite file holding no manifest (built before they were kept there): the home's copy
    # stands in, and only a copy made for that file
    assert _python(first, str(lite), code=FORGET).returncode == 0
    assert generation(second) == newest["generation"]
    done = _python(first, *index, "--milvus-uri", str(other), code="")
    assert done.returncode == 0, done.stderr[-3000:]
    assert generation(first) == "IndexMissingError"  # its copy names other.db now
