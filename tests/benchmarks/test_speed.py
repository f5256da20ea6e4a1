"""The speed benchmark runs end to end on a few claims; the figures come from the script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from benchmarks.raw_graphs import raw_madam, raw_tool_mad
from benchmarks.speed import TOOL_MAD_RULES, LatencyChatModel, main
from factdebate.tools.models.providers import loaded_model, register_model
from factdebate.tools.retrieval import embeddings


def test_benchmark_prints_every_fast_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "rows.json"
    args = ["--latency", "0.01", "--repeats", "1", "--claims", "1", "--json", str(out)]
    assert main([*args, "--skip-embedded", "--skip-index"]) == 0
    rows = json.loads(out.read_text())
    measures = [r["measure"] for r in rows]
    assert len(rows) == 5
    assert measures[0].startswith("Tool-MAD critical path")
    assert measures[1].startswith("MADAM-RAG, 5 documents")
    assert "claims at once" in measures[2] or rows[2]["value"] == "skipped"
    assert "real MiniLM" in measures[4] and "real MiniLM" not in measures[3]
    for row in rows[:2]:
        assert row["detail"]["wall_s"] and row["detail"]["raw_s"]
        assert all(wall > 0 for wall in row["detail"]["wall_s"])
    printed = capsys.readouterr().out
    assert sum(line.startswith("| ") for line in printed.splitlines()) == 6  # header + 5 rows
    assert embeddings.default_embeddings() is not None
    assert not embeddings._override  # the fake embeddings were taken back


def test_bad_settings_are_refused():
    with pytest.raises(SystemExit):
        main(["--latency", "0", "--skip-embedded", "--skip-index"])


async def test_raw_graphs_have_the_methods_shapes():
    tool_mad = await raw_tool_mad(0.0, rounds=3).ainvoke({"round": 0})
    assert tool_mad["round"] == 3
    assert tool_mad["log"].count("score_a") == tool_mad["log"].count("query_b") == 3
    assert tool_mad["log"][-1] == "judge"
    madam = await raw_madam(0.0, documents=5, rounds=2).ainvoke({"round": 0})
    assert madam["round"] == 2 and madam["log"].count("agent") == 10


async def test_latency_model_answers_by_script():
    model = LatencyChatModel(rules=TOOL_MAD_RULES, latency=0.01)
    reply = await model.ainvoke("Put the query inside square brackets.")
    assert reply.content == "[Eiffel Tower location]"


def test_loaded_model_never_loads():
    model = LatencyChatModel(rules=[])
    name = register_model("speed-test-ready", model)
    assert loaded_model(name) is model
    assert loaded_model(model) is model
    assert loaded_model("openai:never-loaded-model") is None


def test_embeddings_override_is_used_and_taken_back():
    fake = DeterministicFakeEmbedding(size=embeddings.EMBEDDING_DIM)
    embeddings.override_embeddings(fake)
    try:
        assert embeddings.default_embeddings() is fake
    finally:
        embeddings.override_embeddings(None)
    assert embeddings.default_embeddings() is not fake


@pytest.mark.slow
def test_index_row_builds_afresh_and_reports_build_time_and_recall(
    tmp_path: Path, data_home: Path
) -> None:
    """The index row (run last, after the embedded rows) indexes a corpus and reads its times."""
    from factdebate.datasets import DatasetError, load_fever_mini_corpus

    try:
        load_fever_mini_corpus()
    except (DatasetError, OSError) as exc:
        pytest.skip(f"shared fever-mini corpus missing: {exc}")
    out = tmp_path / "rows.json"
    embeddings.override_embeddings(DeterministicFakeEmbedding(size=embeddings.EMBEDDING_DIM))
    try:
        args = ["--latency", "0.01", "--repeats", "1", "--claims", "1", "--skip-embedded"]
        assert main([*args, "--index-dataset", "fever-mini", "--json", str(out)]) == 0
    finally:
        embeddings.override_embeddings(None)
    row = json.loads(out.read_text())[-1]
    assert row["measure"] == "index build, fever-mini (293 documents)"
    assert set(row["detail"]["build_s"]) == {"dense", "bm25"}
    recall = row["detail"]["recall@3"]
    assert list(recall) == ["dense", "hybrid", "bm25", "milvus-hybrid", "milvus-bm25"]
    assert row["value"].endswith(f"milvus-bm25 {recall['milvus-bm25']:.3f}")
