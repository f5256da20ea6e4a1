"""Tune BM25's k1 and b on SciFact train for the two-field lexical engine; report dev as well.

Run: ``python -m benchmarks.bm25_tuning`` (``make bench-bm25``). The SciFact corpus is split
into passages exactly as an index build splits it, and every grid point is fitted in memory
through ``lexical_search.fit_lexical`` (the build's own code) and ranked through
``LexicalIndex.rank`` (what the offline search debater receives: distinct documents, best
passage first). The point is chosen on train only (recall@3, then recall@10); dev is
reported there and at the shipped setting, so the choice can be checked, not trusted.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.scifact_recall import emit, gold_claims, recall_3_10, recall_row
from factdebate.datasets import load_scifact_corpus
from factdebate.tools.retrieval.index import split_passages
from factdebate.tools.retrieval.lexical_search import fit_lexical
from factdebate.tools.retrieval.manifest import BM25_B, BM25_K1
from factdebate.tools.retrieval.ranking import Passage

K1S = (0.6, 0.9, 1.2, 1.5, 2.0)
BS = (0.3, 0.5, 0.75, 0.9)
Claims = list[tuple[set[str], str]]


def score(passages: Sequence[Passage], claims: dict[str, Claims], k1: float, b: float) -> Any:
    """Recall@3 and recall@10 per split of BM25(k1, b) over ``passages``."""
    index = fit_lexical(passages, k1, b)
    return {
        split: recall_3_10(
            [[doc for doc, _ in index.rank(claim, 10)] for _, claim in rows],
            [gold for gold, _ in rows],
        )
        for split, rows in claims.items()
    }


def tune(
    passages: Sequence[Passage],
    claims: dict[str, Claims],
    k1s: Sequence[float],
    bs: Sequence[float],
) -> dict[str, Any]:
    """Every grid point's train and dev recall, the point best on train, and the default."""
    grid = [
        {"k1": k1, "b": b, **score(passages, claims, k1, b)} for k1, b in itertools.product(k1s, bs)
    ]
    chosen = max(grid, key=lambda row: row["train"])
    shipped = next(
        (row for row in grid if (row["k1"], row["b"]) == (BM25_K1, BM25_B)),
        {"k1": BM25_K1, "b": BM25_B, **score(passages, claims, BM25_K1, BM25_B)},
    )
    return {
        "grid": grid,
        "chosen": chosen,
        "default": shipped,
        "claims": {split: len(rows) for split, rows in claims.items()},
    }


def render(result: dict[str, Any]) -> str:
    """The chosen and shipped settings as a Markdown table (dev shown, never used to choose)."""
    lines = [
        f"SciFact claims with gold abstracts: train {result['claims']['train']}, "
        f"dev {result['claims']['dev']}",
        "",
        "| setting | k1 | b | train R@3 | train R@10 | dev R@3 | dev R@10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label in (("chosen", "best on train"), ("default", "shipped")):
        row = result[name]
        lines.append(recall_row([label, row["k1"], row["b"]], [row["train"], row["dev"]]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the grid and results here")
    args = parser.parse_args(argv)
    passages = split_passages(load_scifact_corpus())
    claims = {split: gold_claims(split) for split in ("train", "dev")}
    result = tune(passages, claims, K1S, BS)
    return emit(render(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
