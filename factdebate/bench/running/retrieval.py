"""Retrieval benchmark: what each debater's tool returns, scored by recall@k, hit@k and MRR."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factdebate.bench.judging.metrics import retrieval_metrics
from factdebate.bench.running.corpus import collection_name
from factdebate.datasets import DATASETS, DatasetError, dataset_folder, load_corpus, sample
from factdebate.tools.core.files import write_atomic

if TYPE_CHECKING:
    from factdebate.tools.retrieval.manifest import Manifest

CUTS = (3, 10)  # each cut is its own call with that top_k, as a debater would make it
# engine -> (debater tool, rag_engine, the index's lexical engine): the RAG tool's two engines
# and the offline search tool's one, over the bm25s-shard index and over the index whose BM25
# lives in Milvus (the same passages and vectors)
ENGINES: dict[str, tuple[str, str, str]] = {
    "dense": ("rag", "dense", "bm25s"),
    "hybrid": ("rag", "hybrid", "bm25s"),
    "bm25": ("search", "hybrid", "bm25s"),
    "milvus-hybrid": ("rag", "hybrid", "milvus"),
    "milvus-bm25": ("search", "hybrid", "milvus"),
}
# engine -> milvus_native mode: Milvus's own analyzer over raw text (no stemming on Milvus
# Lite) in a copy of the same collection, measured for comparison (see that module)
NATIVE: dict[str, str] = {"analyzer-bm25": "bm25", "analyzer-hybrid": "hybrid"}


def hit_rate(ranked: Sequence[Sequence[str]], gold: Sequence[set[str]], k: int) -> float:
    """Share of queries with at least one gold document in the top ``k``."""
    scored = [(r, g) for r, g in zip(ranked, gold, strict=True) if g]
    return round(sum(bool(g & set(r[:k])) for r, g in scored) / len(scored), 4) if scored else 0.0


def run_retrieval_bench(
    dataset: str,
    data_dir: Path | None,
    limit: int | None,
    out_dir: Path,
    *,
    seed: int = 0,
    milvus_uri: str = "",
    rebuild: bool = False,
    split: str = "dev",
) -> dict[str, Any]:
    """Score every engine through the debaters' own retrieval call on a dataset's claims.

    The corpus is indexed into ``rbench_<dataset>`` (BM25 in bm25s shards) and
    ``rbench_<dataset>_ft`` (BM25 in Milvus: needs Milvus 2.5+ or Milvus Lite 3; its vectors
    are copied from the first, not embedded again) unless indexes of the same corpus are
    already live there (``rebuild`` forces new builds); build times come from the manifests.
    Queries are the claims with gold documents (``meta["gold_doc_ids"]``), a seeded sample of
    ``limit`` when given. Writes ``retrieval.json`` and ``retrieval.md`` to ``out_dir`` and
    returns the same numbers. Milvus's own analyzer over raw text (``NATIVE``) is scored
    beside them over a copy of the same collection, built for the run and dropped after it.
    """
    from factdebate.tools.retrieval.milvus import drop_collection
    from factdebate.tools.retrieval.milvus_native import build_native

    with_corpus = [name for name, spec in DATASETS.items() if spec.corpus is not None]
    if dataset not in with_corpus:
        raise DatasetError(
            f"retrieval benchmark supports {', '.join(with_corpus)}, not {dataset!r}"
        )
    spec = DATASETS[dataset]
    folder = dataset_folder(dataset, data_dir)
    kwargs: dict[str, Any] = {"split": split} if dataset == "scifact" else {}
    loaded = spec.load(folder, **kwargs) if folder else spec.load(**kwargs)
    queries = sample([i for i in loaded.items if i.meta.get("gold_doc_ids")], limit, seed)
    if not queries:
        raise DatasetError(f"{dataset}: no claims with gold documents")
    corpus = load_corpus(dataset, data_dir)
    collection = f"rbench_{collection_name(dataset)}"
    manifest = _indexed(corpus, collection, "bm25s", milvus_uri, rebuild)
    in_milvus = _indexed(corpus, f"{collection}_ft", "milvus", milvus_uri, rebuild, manifest)
    native, copy_s = build_native(manifest, milvus_uri)
    try:
        result = _score(queries, {"bm25s": manifest, "milvus": in_milvus}, native, milvus_uri)
    finally:
        drop_collection(native, milvus_uri)
    result.update(
        dataset=dataset,
        split=split if dataset == "scifact" else "",
        build_s=manifest.build_s,  # the index's own build: dense, bm25
        milvus_build_s=in_milvus.build_s,  # vectors copied; Milvus's BM25 built while inserting
        milvus_version=in_milvus.milvus_version,
        native_copy_s=round(copy_s, 2),
        seed=seed,
        limit=limit,
    )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "retrieval.json", json.dumps(result, indent=2) + "\n")
    write_atomic(out_dir / "retrieval.md", render_retrieval(result))
    return result


def _indexed(
    corpus: Sequence[Any],
    collection: str,
    lexical: str,
    milvus_uri: str,
    rebuild: bool,
    vectors_of: Manifest | None = None,
) -> Manifest:
    """The live index of ``corpus`` in ``collection`` with ``lexical``, built when needed.

    ``vectors_of``: an index of the same passages whose stored vectors are reused.
    """
    from factdebate.tools.retrieval.index import build_index, index_ready, split_passages
    from factdebate.tools.retrieval.manifest import corpus_hash
    from factdebate.tools.retrieval.manifest_store import live_manifest
    from factdebate.tools.retrieval.milvus_native import stored_vectors

    if not rebuild and index_ready(collection, milvus_uri):
        live = live_manifest(collection, milvus_uri)
        if live.lexical == lexical and live.corpus_sha256 == corpus_hash(split_passages(corpus)):
            return live
    encode = None
    if vectors_of is not None:
        known = stored_vectors(vectors_of, milvus_uri)

        def encode(texts: list[str]) -> list[list[float]]:
            return [known[text] for text in texts]

    build_index(corpus, collection, milvus_uri, lexical=lexical, encode=encode)
    return live_manifest(collection, milvus_uri)


def _score(
    queries: Sequence[Any], indexes: dict[str, Manifest], native: str, milvus_uri: str
) -> dict[str, Any]:
    """Every engine's metrics over ``queries`` (each cut its own call) and the index size."""
    from factdebate.tools.dispatch import run_tool
    from factdebate.tools.retrieval.milvus_native import native_rank

    manifest = indexes["bm25s"]

    def call(engine: str, query: str, k: int) -> list[str]:
        if engine in NATIVE:
            return native_rank(native, manifest, query, k, NATIVE[engine], milvus_uri)
        tool, rag_engine, lexical = ENGINES[engine]
        docs = run_tool(
            tool,
            query,
            k=k,
            collection=indexes[lexical].collection,
            milvus_uri=milvus_uri,
            search_backend_name="offline",
            rag_engine=rag_engine,
        )
        return [d["id"] for d in docs]

    every = [*ENGINES, *NATIVE]
    for item in queries[:5]:  # warm up: model load, collection load, background index build
        for engine in every:
            call(engine, item.claim, max(CUTS))
    gold = [set(map(str, item.meta["gold_doc_ids"])) for item in queries]
    engines: dict[str, Any] = {}
    for engine in every:
        runs: dict[int, list[list[str]]] = {k: [] for k in CUTS}
        seconds = 0.0
        for item in queries:
            for k in CUTS:
                t0 = time.perf_counter()
                runs[k].append(call(engine, item.claim, k))
                seconds += time.perf_counter() - t0 if k == CUTS[0] else 0.0
        at3 = retrieval_metrics(runs[3], gold, ks=(1, 3))
        at10 = retrieval_metrics(runs[10], gold, ks=(10,))
        engines[engine] = {
            "recall@1": at3["recall@1"],
            "recall@3": at3["recall@3"],
            "recall@10": at10["recall@10"],
            "hit@3": hit_rate(runs[3], gold, 3),
            "hit@10": hit_rate(runs[10], gold, 10),
            "mrr@10": at10["mrr@10"],
            "distinct@3": round(sum(len(set(r)) for r in runs[3]) / len(queries), 3),
            "ms_per_query": round(1000 * seconds / len(queries), 2),
        }
    return {
        "queries": len(queries),
        "documents": manifest.documents,
        "passages": manifest.passages,
        "engines": engines,
    }


def render_retrieval(result: dict[str, Any]) -> str:
    """Markdown table of a retrieval benchmark."""
    build = result["build_s"]
    builds = {"dense": build.get("dense", 0.0), "bm25": build.get("bm25", 0.0)}
    builds["hybrid"] = builds["dense"] + builds["bm25"]
    in_milvus = result.get("milvus_build_s", {})  # vectors copied, BM25 built inside Milvus
    builds["milvus-bm25"] = in_milvus.get("dense", 0.0)
    builds["milvus-hybrid"] = builds["dense"] + builds["milvus-bm25"]
    builds["analyzer-bm25"] = result.get("native_copy_s", 0.0)  # vectors copied
    builds["analyzer-hybrid"] = builds["dense"] + builds["analyzer-bm25"]
    lines = [
        f"# Retrieval on {result['dataset']} {result.get('split', '')}".rstrip(),
        "",
        f"{result['queries']} queries, {result['documents']} documents "
        f"({result['passages']} passages). Each cell is what a debater's tool returns "
        "(top_k = 3 for @1/@3, top_k = 10 for @10); ms/query at top_k = 3. bm25 and hybrid: "
        "BM25 in bm25s shards; milvus-*: BM25 inside Milvus "
        f"({result.get('milvus_version', '?')}), same analysis; analyzer-*: Milvus's own "
        "analyzer over raw text (Milvus Lite does not stem). Build s of milvus-*: copying "
        "the vectors and Milvus's BM25.",
        "",
        "| engine | recall@1 | recall@3 | recall@10 | hit@3 | hit@10 | MRR@10 | "
        "distinct docs in top 3 | build s | ms/query |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in result["engines"].items():
        lines.append(
            f"| {name} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | {m['recall@10']:.3f} | "
            f"{m['hit@3']:.3f} | {m['hit@10']:.3f} | {m['mrr@10']:.3f} | {m['distinct@3']:.2f} | "
            f"{builds.get(name, 0.0):.1f} | {m['ms_per_query']:.1f} |"
        )
    return "\n".join(lines) + "\n"
