"""What the SciFact tuning benchmarks share: gold claims, recall@3/@10, table rows, output."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factdebate.bench.judging.metrics import retrieval_metrics
from factdebate.datasets import load_scifact


def gold_claims(split: str) -> list[tuple[set[str], str]]:
    """``(gold abstract ids, claim)`` of every SciFact claim of ``split`` with gold abstracts."""
    out = []
    for item in load_scifact(split=split).items:
        gold = set(map(str, item.meta.get("gold_doc_ids") or []))
        if gold:
            out.append((gold, item.claim))
    return out


def recall_3_10(ranked: Sequence[Sequence[str]], gold: Sequence[set[str]]) -> tuple[float, float]:
    """Recall@3 and recall@10 of document rankings (best first)."""
    at3 = retrieval_metrics([r[:3] for r in ranked], gold, ks=(3,))["recall@3"]
    at10 = retrieval_metrics([r[:10] for r in ranked], gold, ks=(10,))["recall@10"]
    return at3, at10


def recall_row(cells: Sequence[object], recalls: Sequence[tuple[float, float]]) -> str:
    """A Markdown table row: ``cells`` as given, then each (R@3, R@10) pair to 3 decimals."""
    numbers = [f"{value:.3f}" for pair in recalls for value in pair]
    return "| " + " | ".join([*map(str, cells), *numbers]) + " |"


def emit(table: str, result: dict[str, Any], json_path: Path | None) -> int:
    """Print ``table``; write ``result`` as JSON too when a path is given. Returns exit code 0."""
    print(table)
    if json_path:
        json_path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0
