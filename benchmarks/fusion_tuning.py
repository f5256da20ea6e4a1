"""Tune the hybrid engine's fusion (dense weight, RRF k) on SciFact train; report dev as well.

Run: ``python -m benchmarks.fusion_tuning`` (``make bench-fusion``) after
``factdebate bench-retrieval --dataset scifact`` has built the ``rbench_scifact`` index. Each
claim's dense and stemmed-BM25 document rankings (100 deep, the depth the hybrid engine
fuses) are computed once through the engines' own calls; every grid point then re-fuses
them with ``ranking.rrf``. The setting is chosen on train only (recall@3, then
recall@10) and dev is reported at that setting and at the shipped default, so whether
tuning transfers is measured rather than assumed.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.scifact_recall import emit, gold_claims, recall_3_10, recall_row
from factdebate.tools.dispatch import DENSE_WEIGHT
from factdebate.tools.retrieval.lexical_search import FETCH_DOCS, lexical_index
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.ranking import RRF_K, rrf
from factdebate.tools.retrieval.vectorstore import dense_rank

WEIGHTS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
KS = (1, 5, 10, 20, 30, 60, 100)
Rankings = list[tuple[set[str], list[str], list[str]]]


def rankings(collection: str, split: str) -> Rankings:
    """Gold documents, dense ranking and BM25 ranking of every claim with gold abstracts."""
    manifest = live_manifest(collection)
    lexical = lexical_index(manifest)
    return [
        (
            gold,
            [doc for doc, _, _ in dense_rank(manifest, claim, FETCH_DOCS)],
            [doc for doc, _ in lexical.rank(claim, FETCH_DOCS)],
        )
        for gold, claim in gold_claims(split)
    ]


def score(rows: Rankings, weight: float, k: int) -> tuple[float, float]:
    """Recall@3 and recall@10 of the fused rankings."""
    fused = [[doc for doc, _ in rrf([dense, lex], [weight, 1.0], k)][:10] for _, dense, lex in rows]
    return recall_3_10(fused, [g for g, _, _ in rows])


def tune(
    train: Rankings, dev: Rankings, weights: Sequence[float], ks: Sequence[int]
) -> dict[str, Any]:
    """The grid on train, the chosen point, and dev at the chosen point and at the default."""
    grid: list[tuple[tuple[float, float], float, int]] = [
        (score(train, w, k), w, k) for w, k in itertools.product(weights, ks)
    ]
    best_train, weight, k = max(grid)
    return {
        "grid": [{"dense_weight": w, "rrf_k": k, "train": t} for t, w, k in grid],
        "chosen": {
            "dense_weight": weight,
            "rrf_k": k,
            "train": best_train,
            "dev": score(dev, weight, k),
        },
        "default": {
            "dense_weight": DENSE_WEIGHT,
            "rrf_k": RRF_K,
            "train": score(train, DENSE_WEIGHT, RRF_K),
            "dev": score(dev, DENSE_WEIGHT, RRF_K),
        },
        "claims": {"train": len(train), "dev": len(dev)},
    }


def render(result: dict[str, Any]) -> str:
    """The chosen and default settings as a Markdown table."""
    lines = [
        f"SciFact claims with gold abstracts: train {result['claims']['train']}, "
        f"dev {result['claims']['dev']}",
        "",
        "| setting | dense weight | RRF k | train R@3 | train R@10 | dev R@3 | dev R@10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in ("chosen", "default"):
        row = result[name]
        label = "best on train" if name == "chosen" else "shipped default"
        lines.append(
            recall_row([label, row["dense_weight"], row["rrf_k"]], [row["train"], row["dev"]])
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--collection", default="rbench_scifact", help="index of the corpus")
    parser.add_argument("--json", type=Path, help="also write the grid and results here")
    args = parser.parse_args(argv)
    result = tune(rankings(args.collection, "train"), rankings(args.collection, "dev"), WEIGHTS, KS)
    return emit(render(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
