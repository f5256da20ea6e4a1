"""Scale benchmark (``make bench-scale``): ingest throughput, store path at 100k/1M, resume check.

Rows, each measured in a child process (its own peak RSS) against a Milvus standalone server
(PyPI ``milvus``, ``make milvus-server``) started on 127.0.0.1 for the run:

(a) ``encoder``: ``factdebate``'s ingest of a SciFact passage slice with the real MiniLM encoder
    against ``SentenceTransformer.encode`` of the same texts (throughput ratio).
(b) ``store N``: N synthetic passages (Zipf words) with generated vectors, so the encoder's
    CPU cost is kept apart: insert rate, BM25 build, HNSW build wait, peak RSS, then query
    latency p50/p95 (dense = MiniLM query + HNSW search, lexical = memory-mapped BM25,
    hybrid = both fused) in a fresh process.
(c) ``resume``: an ingest SIGKILLed mid-build, re-run, every id counted in Milvus and in the
    passage store.
(d) ``lexical scifact dev``: recall@3/@10 of BM25 as served (on-disk passage store, matrices
    memory-mapped) on SciFact dev, against the 0.850 of the in-memory engine it replaced;
    then again built in five shards, each scored with its own statistics.
(e) ``bm25 shard with encoder``: peak RSS of one full BM25 shard build in a process holding
    the loaded MiniLM encoder, the ceiling of an ingest's BM25 phase at any corpus size.

Everything lives under ``runs/scale`` (the server's data, FACTDEBATE_HOME, results.json): a
finished store row is reused, a killed one resumes, so the 1M row can be run in pieces.
Options: ``--sizes 100000,1000000``, ``--slice 20000``, ``--queries 200``, ``--only a,b,c,d,e``,
``--rebuild`` (build the store rows again).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs" / "scale"
VOCAB = 50_000  # synthetic words
WORDS = (60, 140)  # words per synthetic passage
CHUNK = 10_000  # synthetic documents generated per seeded chunk
RESUME_DOCS = 20_000


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _resident_mb() -> float:
    """Resident memory now (not the peak so far)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1024**2


def _vocab() -> list[str]:
    rng = random.Random(0)
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < VOCAB:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def synthetic(n: int) -> Iterator[dict[str, str]]:
    """``n`` passages of Zipf-distributed words, the same on every call (resumes rely on it)."""
    import numpy as np

    vocab = np.array(_vocab())
    weights = 1.0 / np.arange(1, VOCAB + 1)
    weights /= weights.sum()
    for start in range(0, n, CHUNK):
        rng = np.random.default_rng(start)
        for i in range(start, min(start + CHUNK, n)):
            words = vocab[rng.choice(VOCAB, size=int(rng.integers(*WORDS)), p=weights)]
            yield {
                "id": f"s{i}",
                "title": " ".join(words[:3]).title(),
                "text": " ".join(words) + ".",
                "source": "",
                "score": 0.0,  # type: ignore[dict-item]
            }


def fake_encode(texts: list[str]) -> list[list[float]]:
    """Unit vectors generated from the texts (cheap, deterministic): the store path alone."""
    import numpy as np

    rng = np.random.default_rng(zlib.crc32(texts[0].encode()) + len(texts))
    vectors = rng.standard_normal((len(texts), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.tolist()  # type: ignore[no-any-return]


def _queries(count: int) -> list[str]:
    rng = random.Random(1)
    vocab = _vocab()
    return [
        " ".join(rng.choice(vocab[50:5000]) for _ in range(rng.randint(2, 5))) for _ in range(count)
    ]


# ---------------------------------------------------------------- children (one row each)


def child_store(n: int, uri: str, rebuild: bool = False) -> dict[str, Any]:
    """Ingest ``n`` synthetic passages with generated vectors; timings and peak RSS.

    A finished store is reused unless ``rebuild`` (then a new generation is built beside it).
    """
    from factdebate.tools.retrieval.index import ingest
    from factdebate.tools.retrieval.manifest_store import live_manifest

    collection = f"scale{n}"
    try:
        done = live_manifest(collection, uri)
        if done.passages == n and not rebuild:
            return {"reused": True, "passages": n}
    except Exception:  # noqa: S110 - not built yet
        pass
    start = time.perf_counter()
    marks: list[tuple[float, int, float]] = []
    manifest = ingest(
        synthetic(n),  # type: ignore[arg-type]
        collection,
        uri,
        source=f"synthetic-{n}-v1",
        encode=fake_encode,
        checkpoint_s=60,
        on_batch=lambda docs, passages: marks.append((time.perf_counter(), passages, _rss_mb())),
    )
    end = time.perf_counter()
    loop_end, _, insert_peak = marks[-1]
    resumed_from = marks[0][1]
    inserted = n - resumed_from
    bm25 = manifest.build_s["bm25"]
    return {
        "passages": n,
        "resumed_from": resumed_from,
        "insert_per_s": round(inserted / max(loop_end - start, 1e-9)),
        "insert_s": round(loop_end - start, 1),
        "bm25_build_s": bm25,
        "hnsw_wait_s": round(end - loop_end - bm25, 1),
        "insert_peak_rss_mb": round(insert_peak),  # streaming and inserts, before BM25
        "ingest_peak_rss_mb": round(_rss_mb()),  # the whole ingest, BM25 build included
    }


def _percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=20)
    return round(statistics.median(samples) * 1000, 1), round(cuts[18] * 1000, 1)


def child_query(n: int, uri: str, count: int) -> dict[str, Any]:
    """Query latency of the three engines on a fresh process (indexes opened, then timed)."""
    from factdebate.tools.dispatch import hybrid_search
    from factdebate.tools.retrieval.embeddings import default_embeddings
    from factdebate.tools.retrieval.lexical_search import lexical_index
    from factdebate.tools.retrieval.manifest_store import live_manifest
    from factdebate.tools.retrieval.milvus import milvus_client
    from factdebate.tools.retrieval.vectorstore import (
        READ_CONSISTENCY,
        dense_rank,
        passage_depth,
        search_params,
    )

    collection = f"scale{n}"
    manifest = live_manifest(collection, uri)
    client = milvus_client(uri)
    fetch = passage_depth(3, manifest.passages)

    def ann_only(query: str) -> None:  # the server's HNSW search alone, vector given
        client.search(
            manifest.milvus_name,
            data=[vectors[query]],
            limit=fetch,
            output_fields=["doc", "title", "text"],
            search_params=search_params(manifest, fetch),
            consistency_level=READ_CONSISTENCY,
        )

    opened = time.perf_counter()
    lexical = lexical_index(manifest)
    open_s = time.perf_counter() - opened
    queries = _queries(count)
    raw: Any = default_embeddings()
    raw = getattr(raw, "inner", raw)  # past the query memory: every timed query is embedded
    vectors = {q: raw.embed_query(q) for q in queries}
    engines = {
        "embed_query": raw.embed_query,
        "hnsw_search": ann_only,
        "dense": lambda q: dense_rank(manifest, q, 3, uri),
        "lexical": lambda q: lexical.rank(q, 3),
        "hybrid": lambda q: hybrid_search(collection, q, 3, uri),
    }
    out: dict[str, Any] = {"lexical_open_s": round(open_s, 2)}
    memory = getattr(default_embeddings(), "_vectors", {})
    for name, run in engines.items():
        memory.clear()  # no engine gets the query vectors another one computed
        for q in queries[:5]:
            run(q)  # warm-up: model load, collection load, page cache
        times = []
        memory.clear()
        for q in queries:
            t = time.perf_counter()
            run(q)
            times.append(time.perf_counter() - t)
        out[f"{name}_p50_ms"], out[f"{name}_p95_ms"] = _percentiles(times)
    out["query_peak_rss_mb"] = round(_rss_mb())
    return out


def child_encoder(count: int, uri: str) -> dict[str, Any]:
    """The real encoder: ingest of ``count`` SciFact passages vs raw encode of the same texts."""
    from sentence_transformers import SentenceTransformer

    from factdebate.datasets import load_scifact_corpus
    from factdebate.tools.retrieval.embeddings import default_embeddings
    from factdebate.tools.retrieval.index import ingest, split_passages

    base = split_passages(load_scifact_corpus())
    docs = []
    for i in range(count):  # SciFact's passages, repeated under new ids up to ``count``
        p = base[i % len(base)]
        docs.append({"id": f"{p['id']}~{i}", "title": p["title"], "text": p["text"]})
    passages = split_passages(docs)  # type: ignore[arg-type]
    texts = [f"{p['title']}\n{p['text']}" for p in passages]
    default_embeddings().embed_documents(texts[:64])  # load and warm up
    inner: Any = default_embeddings()
    while hasattr(inner, "inner"):
        inner = inner.inner
    model: SentenceTransformer = inner._client if hasattr(inner, "_client") else inner.client
    start = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)  # as the ingest encodes
    raw_s = time.perf_counter() - start
    raw_peak = _rss_mb()
    resident: list[float] = []  # the ingest's own resident memory after every step
    start = time.perf_counter()
    manifest = ingest(
        docs,  # type: ignore[arg-type]
        f"encoder{count}",
        uri,
        source=f"scifact-slice-{count}-{time.time()}",
        on_batch=lambda docs, passages: resident.append(_resident_mb()),
    )
    ingest_s = time.perf_counter() - start
    return {
        "passages": manifest.passages,
        "raw_encode_per_s": round(len(texts) / raw_s, 1),
        "ingest_per_s": round(manifest.passages / ingest_s, 1),
        "ratio": round(raw_s / ingest_s, 3),
        "bm25_build_s": manifest.build_s["bm25"],
        "raw_phase_peak_rss_mb": round(raw_peak),
        "ingest_rss_first_step_mb": round(resident[0]),
        "ingest_rss_last_step_mb": round(resident[-1]),
        "ingest_rss_max_step_mb": round(max(resident)),
        "peak_rss_mb": round(_rss_mb()),  # the child's peak: raw encode and ingest
    }


SMALL_SHARDS = 2_000  # the sharding check: SciFact's 9k passages in five shards


def child_scifact() -> dict[str, Any]:
    """SciFact dev recall@3/@10 of BM25 as served (on-disk store, memory-mapped matrices).

    Measured as shipped (SciFact fits one shard) and again built in shards of
    ``SMALL_SHARDS`` passages, each scored with its own statistics, as a corpus larger than
    ``factdebate.tools.retrieval.lexical.SHARD_PASSAGES`` is.
    """
    import factdebate.tools.retrieval.lexical as lexical
    from benchmarks.scifact_recall import gold_claims, recall_3_10
    from factdebate.datasets import load_scifact_corpus
    from factdebate.tools.retrieval.index import split_passages

    passages = split_passages(load_scifact_corpus())
    claims = gold_claims("dev")
    out: dict[str, Any] = {"claims": len(claims), "passages": len(passages)}
    for label, shard_size in (("", lexical.SHARD_PASSAGES), ("sharded_", SMALL_SHARDS)):
        lexical.SHARD_PASSAGES = shard_size
        target = RUNS / f"scifact-bm25-{shard_size}"
        start = time.perf_counter()
        lexical.build_bm25(target, passages)
        build_s = time.perf_counter() - start
        index = lexical.open_lexical(target)
        ranked = [[doc for doc, _ in index.rank(claim, 10)] for _, claim in claims]
        at3, at10 = recall_3_10(ranked, [gold for gold, _ in claims])
        out |= {
            f"{label}shards": len(index.shards),
            f"{label}recall_at_3": round(at3, 3),
            f"{label}recall_at_10": round(at10, 3),
            f"{label}build_s": round(build_s, 1),
        }
    return out


def child_shard_peak() -> dict[str, Any]:
    """Peak memory of one full BM25 shard build in a process that holds the loaded encoder.

    An ingest builds BM25 after the last batch is encoded, with the encoder still loaded:
    this is that phase's ceiling, whatever the corpus size (one shard is held at a time).
    """
    import factdebate.tools.retrieval.lexical as lexical
    from factdebate.datasets import load_scifact_corpus
    from factdebate.tools.retrieval.embeddings import default_embeddings
    from factdebate.tools.retrieval.index import split_passages

    texts = [f"{p['title']}\n{p['text']}" for p in split_passages(load_scifact_corpus())[:256]]
    default_embeddings().embed_documents(texts)  # the encoder loaded and run, as in an ingest
    encoder_peak = _rss_mb()
    target = RUNS / "shard-peak"
    shutil.rmtree(target, ignore_errors=True)
    writer = lexical.PassageWriter(target)  # streamed to disk, as an ingest stores passages
    for passage in synthetic(lexical.SHARD_PASSAGES):
        writer.append([{**passage, "doc": passage["id"]}])  # type: ignore[typeddict-item]
    writer.close()
    lexical.build_lexical(target)
    return {
        "shard_passages": lexical.SHARD_PASSAGES,
        "encoder_peak_rss_mb": round(encoder_peak),
        "peak_rss_mb": round(_rss_mb()),
    }


RESUME_CHILD = """
import sys
from benchmarks.scale import fake_encode, synthetic, RESUME_DOCS
from factdebate.tools.retrieval.index import ingest
ingest(synthetic(RESUME_DOCS), "scaleresume", sys.argv[1], source="resume-v1",
       encode=fake_encode, checkpoint_s=0,
       on_batch=lambda d, p: print("batch", p, flush=True))
print("done", flush=True)
"""


def child_counts(uri: str) -> dict[str, Any]:
    """Count the resumed build: Milvus ids and store passages against the corpus."""
    from benchmarks.scale import synthetic
    from factdebate.tools.retrieval.index import split_passages
    from factdebate.tools.retrieval.lexical import PassageStore
    from factdebate.tools.retrieval.manifest import bm25_dir
    from factdebate.tools.retrieval.manifest_store import live_manifest
    from factdebate.tools.retrieval.milvus import milvus_client

    manifest = live_manifest("scaleresume", uri)
    client = milvus_client(uri)
    client.load_collection(manifest.milvus_name)
    ids: list[int] = []
    for low in range(0, manifest.passages + 10_000, 10_000):
        rows = client.query(
            manifest.milvus_name,
            filter=f"id >= {low} and id < {low + 10_000}",
            output_fields=["id"],
            limit=16_384,
            consistency_level="Strong",
        )
        ids += [int(r["id"]) for r in rows]
    expected = [p["id"] for p in split_passages(synthetic(RESUME_DOCS))]  # type: ignore[arg-type]
    stored = [p["id"] for p in PassageStore(bm25_dir("scaleresume", manifest.generation))]
    return {
        "expected": len(expected),
        "milvus_rows": len(ids),
        "milvus_distinct": len(set(ids)),
        "milvus_ids_exact": sorted(ids) == list(range(len(expected))),
        "store_exact": stored == expected,
    }


# ---------------------------------------------------------------- parent


def _run_child(args: list[str], env: dict[str, str], timeout: float = 7200) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.scale", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {done.stderr[-1500:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def resume_row(uri: str, env: dict[str, str]) -> dict[str, Any]:
    """SIGKILL an ingest after a few checkpointed steps, resume it, count every passage."""
    child = subprocess.Popen(
        [sys.executable, "-c", RESUME_CHILD, uri],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None
    killed_at = 0
    for line in child.stdout:
        if line.startswith("batch") and int(line.split()[1]) >= 6000:
            killed_at = int(line.split()[1])
            time.sleep(random.uniform(0, 0.5))  # inside the next step
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    state = json.loads((RUNS / "home" / "builds" / "scaleresume.json").read_text())
    done = subprocess.run(
        [sys.executable, "-c", RESUME_CHILD, uri],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=3600,
    )
    if "done" not in done.stdout:
        raise RuntimeError(f"the resumed ingest failed: {done.stderr[-1500:]}")
    counts = _run_child(["counts", uri], env)
    counts.update(
        killed_after=killed_at,
        checkpointed=state["passages"],
        resumed_first=int(done.stdout.split()[1]),
    )
    return counts


def _stable_port(fresh: int) -> int:
    """The port of earlier runs when it is free (builds resume only on the same URI)."""
    import socket

    saved = RUNS / "port"
    if saved.exists():
        port = int(saved.read_text())
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
                return port
            except OSError:
                pass
    saved.write_text(str(fresh))
    return fresh


def _server_rss_mb(server: Any) -> float:
    import psutil

    total = 0
    for pid in server.children:
        try:
            total += psutil.Process(pid).memory_info().rss
        except psutil.Error:
            continue
    return round(total / 1024**2)


def main(argv: list[str] | None = None) -> None:
    """Run the rows asked for and print the table (results also kept in runs/scale)."""
    parser = argparse.ArgumentParser(prog="bench-scale")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--slice", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--only", default="a,b,c,d,e")
    parser.add_argument(
        "--rebuild", action="store_true", help="build the store rows again, not reuse them"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.milvus_server import MilvusServer

    RUNS.mkdir(parents=True, exist_ok=True)
    (RUNS / "milvus").mkdir(exist_ok=True)
    results_file = RUNS / "results.json"
    results: dict[str, Any] = json.loads(results_file.read_text()) if results_file.exists() else {}
    env = {
        **os.environ,
        "FACTDEBATE_HOME": str(RUNS / "home"),
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
    }
    only = set(args.only.split(","))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    server = MilvusServer(RUNS / "milvus")
    server.port = _stable_port(server.port)  # a resumed build must find the same URI
    server.start()
    try:
        uri = server.uri

        def keep(key: str, row: dict[str, Any]) -> None:
            results[key] = row
            results_file.write_text(json.dumps(results, indent=2))
            print(key, json.dumps(row), flush=True)

        if "a" in only and args.slice:
            keep(f"encoder {args.slice}", _run_child(["encoder", str(args.slice), uri], env))
        if "b" in only:
            for n in (int(s) for s in args.sizes.split(",") if s):
                row = _run_child(["store", str(n), uri, *(["rebuild"] * args.rebuild)], env)
                if row.get("reused"):
                    row = results.get(f"store {n}", row)
                else:
                    row["server_rss_mb"] = _server_rss_mb(server)
                row.update(_run_child(["query", str(n), uri, str(args.queries)], env))
                keep(f"store {n}", row)
        if "c" in only:
            keep("resume", resume_row(uri, env))
        if "d" in only:
            keep("lexical scifact dev", _run_child(["scifact"], env))
        if "e" in only:
            keep("bm25 shard with encoder", _run_child(["shardpeak"], env))
    finally:
        server.stop()
    print()
    print(table(results))


def table(results: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    lines = ["| row | measured |", "|---|---|"]
    for key, row in results.items():
        shown = ", ".join(f"{k} {v}" for k, v in row.items())
        lines.append(f"| {key} | {shown} |")
    return "\n".join(lines)


def _child_main(argv: list[str]) -> None:
    kind = argv[0]
    if kind == "store":
        print(json.dumps(child_store(int(argv[1]), argv[2], argv[3:] == ["rebuild"])))
    elif kind == "query":
        print(json.dumps(child_query(int(argv[1]), argv[2], int(argv[3]))))
    elif kind == "encoder":
        print(json.dumps(child_encoder(int(argv[1]), argv[2])))
    elif kind == "counts":
        print(json.dumps(child_counts(argv[1])))
    elif kind == "shardpeak":
        print(json.dumps(child_shard_peak()))
    elif kind == "scifact":
        print(json.dumps(child_scifact()))
    else:
        raise SystemExit(f"unknown child {kind!r}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in {
        "store",
        "query",
        "encoder",
        "counts",
        "scifact",
        "shardpeak",
    }:
        _child_main(sys.argv[1:])
    else:
        main()
