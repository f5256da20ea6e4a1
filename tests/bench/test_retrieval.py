"""`bench-retrieval`: every engine (bm25s and Milvus BM25) scored on a dataset's claims."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import data_or_skip


def test_retrieval_bench_scores_every_engine_and_drops_the_milvus_copy(
    data_home: Path, tmp_path: Path
) -> None:
    from factdebate.bench.running.retrieval import ENGINES, NATIVE, run_retrieval_bench
    from factdebate.tools.retrieval.milvus import locked_client

    out = data_or_skip(
        lambda: run_retrieval_bench("fever-mini", None, 6, tmp_path / "out"), "fever-mini"
    )
    assert list(out["engines"]) == [*ENGINES, *NATIVE] and out["queries"] == 6
    for name, metrics in out["engines"].items():
        assert 0 <= metrics["recall@3"] <= metrics["recall@10"] <= 1, name
        # passages are grouped by document; BM25 may find fewer than 3 with a query word
        assert metrics["distinct@3"] == 3 or name.endswith("bm25"), name
    assert out["engines"]["hybrid"]["recall@10"] > 0.5  # gold abstracts are found at all
    assert out["native_copy_s"] > 0 and set(out["build_s"]) == {"dense", "bm25"}
    assert out["milvus_version"].startswith("milvus_lite-3")
    # the same passages, BM25 inside Milvus with the same analysis: recall close to bm25s's
    bm25, in_milvus = out["engines"]["bm25"], out["engines"]["milvus-bm25"]
    assert abs(bm25["recall@10"] - in_milvus["recall@10"]) <= 0.2
    with locked_client() as client:
        assert not [c for c in client.list_collections() if "_native__" in c]
    table = (tmp_path / "out" / "retrieval.md").read_text(encoding="utf-8")
    assert "| milvus-hybrid |" in table and "| milvus-bm25 |" in table
    assert "| analyzer-hybrid |" in table and "| analyzer-bm25 |" in table
