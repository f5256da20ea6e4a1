"""Retrieval benchmark: recall@1/3/10 and MRR@10 of dense, BM25 and reciprocal-rank fusion."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factdebate.bench import CORPORA, collection_name, dataset_folder
from factdebate.datasets import DATASETS, DatasetError, sample
from factdebate.metrics import retrieval_metrics
from tools.files import write_atomic

RRF_K = 60
DEPTH = 10
FETCH = 30  # passages fetched per engine before collapsing them to documents


def doc_ids(passage_ids: Sequence[str], depth: int = DEPTH) -> list[str]:
    """Collapse passage ids (``doc#i``) to document ids, first occurrence wins."""
    out: list[str] = []
    for pid in passage_ids:
        doc = pid.split("#", 1)[0]
        if doc not in out:
            out.append(doc)
    return out[:depth]


def fuse(rankings: Sequence[Sequence[str]], k: int = RRF_K, depth: int = DEPTH) -> list[str]:
    """Reciprocal-rank fusion: score(d) = sum over rankings of 1 / (k + rank)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, 1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda d: (-scores[d], d))[:depth]


def run_retrieval_bench(
    dataset: str,
    data_dir: Path | None,
    limit: int | None,
    out_dir: Path,
    *,
    seed: int = 0,
    milvus_uri: str = "",
) -> dict[str, Any]:
    """Index the dataset's corpus afresh and score dense, BM25 and fused retrieval.

    Queries are the claims that have gold documents (``meta["gold_doc_ids"]``); a seeded
    sample of ``limit`` of them when given. Writes ``retrieval.json`` and ``retrieval.md``
    to ``out_dir`` and returns the same numbers.
    """
    from tools.index import build_index
    from tools.search import OfflineSearch
    from tools.vectorstore import dense_search

    if dataset not in CORPORA:
        raise DatasetError(f"retrieval benchmark supports {', '.join(CORPORA)}, not {dataset!r}")
    folder = dataset_folder(dataset, data_dir)
    loaded = DATASETS[dataset](folder) if folder is not None else DATASETS[dataset]()
    queries = sample([i for i in loaded.items if i.meta.get("gold_doc_ids")], limit, seed)
    if not queries:
        raise DatasetError(f"{dataset}: no claims with gold documents")
    corpus = CORPORA[dataset](folder) if folder is not None else CORPORA[dataset]()
    collection = f"rbench_{collection_name(dataset)}"

    t0 = time.perf_counter()
    passages = build_index(corpus, collection, milvus_uri)
    build_s = time.perf_counter() - t0
    lexical = OfflineSearch(collection)
    for item in queries[:5]:  # warm up: model load, collection load, background index build
        dense_search(collection, item.claim, FETCH, milvus_uri)
        lexical.search(item.claim, FETCH)

    ranked: dict[str, list[list[str]]] = {"dense": [], "bm25": [], "fusion": []}
    seconds: dict[str, float] = dict.fromkeys(ranked, 0.0)
    for item in queries:
        t0 = time.perf_counter()
        dense = doc_ids(
            [d["id"] for d in dense_search(collection, item.claim, FETCH, milvus_uri)], FETCH
        )
        t1 = time.perf_counter()
        bm25 = doc_ids([d["id"] for d in lexical.search(item.claim, FETCH)], FETCH)
        t2 = time.perf_counter()
        fused = fuse([dense, bm25])
        dense_s, bm25_s, fuse_s = t1 - t0, t2 - t1, time.perf_counter() - t2
        ranked["dense"].append(dense[:DEPTH])
        ranked["bm25"].append(bm25[:DEPTH])
        ranked["fusion"].append(fused)
        seconds["dense"] += dense_s
        seconds["bm25"] += bm25_s
        seconds["fusion"] += dense_s + bm25_s + fuse_s
    gold = [set(map(str, item.meta["gold_doc_ids"])) for item in queries]
    result: dict[str, Any] = {
        "dataset": dataset,
        "queries": len(queries),
        "documents": len(corpus),
        "passages": passages,
        "index_build_s": round(build_s, 2),
        "seed": seed,
        "limit": limit,
        "engines": {
            name: {
                **retrieval_metrics(runs, gold),
                "ms_per_query": round(1000 * seconds[name] / len(queries), 2),
            }
            for name, runs in ranked.items()
        },
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "retrieval.json", json.dumps(result, indent=2) + "\n")
    write_atomic(out_dir / "retrieval.md", render_retrieval(result))
    return result


def render_retrieval(result: dict[str, Any]) -> str:
    """Markdown table of a retrieval benchmark."""
    lines = [
        f"# Retrieval on {result['dataset']}",
        "",
        f"{result['queries']} queries, {result['documents']} documents "
        f"({result['passages']} passages), index build {result['index_build_s']:.1f} s.",
        "",
        "| engine | recall@1 | recall@3 | recall@10 | MRR@10 | ms/query |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, m in result["engines"].items():
        lines.append(
            f"| {name} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | "
            f"{m['recall@10']:.3f} | {m['mrr@10']:.3f} | {m['ms_per_query']:.1f} |"
        )
    return "\n".join(lines) + "\n"
