"""Ranking helpers every engine shares: passages grouped by document, reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from typing_extensions import TypedDict

RRF_K = 60  # the usual reciprocal-rank-fusion constant


class Passage(TypedDict):
    """One indexed piece of a document (a whole short document, or a slice of a long one)."""

    id: str
    doc: str
    title: str
    text: str


def best_per_document(ranked: Iterable[tuple[str, int]], k: int) -> list[tuple[str, int]]:
    """Keep the first (best) passage of each document until ``k`` documents are found.

    Args:
        ranked: ``(document id, passage index)`` pairs, best passage first.
        k: How many distinct documents to return.
    """
    seen: set[str] = set()
    out: list[tuple[str, int]] = []
    for doc, index in ranked:
        if doc in seen:
            continue
        seen.add(doc)
        out.append((doc, index))
        if len(out) == k:
            break
    return out


def rrf(
    rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None, k: int = RRF_K
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: score(d) = sum of weight / (k + rank of d), best first.

    Ties break by first appearance (the earlier ranking, then the better rank) so results
    are deterministic.
    """
    weights = weights if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(rankings)} rankings but {len(weights)} weights")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranking, 1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    order = {doc: i for i, doc in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
