"""Long-form factuality scores: precision, pyramid weights, weighted P, recall@gamma, F1@gamma.

Pyramid (MAD-Fact section 5): G reference answers are split into claims and equivalent
claims are merged into one golden set. A golden claim found in ``f`` of the G references
sits in layer ``G - f + 1`` and weighs ``G + 2 - layer`` (= ``f + 1``: 4/3/2 for G = 3).
An answer claim takes the weight of the golden claim it matches; a claim matching none
weighs 1, the weight the same formula gives a claim found in no reference (f = 0).

Equivalence: two claims are the same when their normalised text (case, spacing and
punctuation ignored) is equal, or - with an embedding function - when the cosine of their
embeddings is at least ``threshold`` and both state the same numbers (MiniLM scores
"completed in 1889" and "completed in 1887" at 0.92, as high as true paraphrases, so numbers
are compared exactly; claims differing only in a non-numeric detail, e.g. "Nobel Prize in
Physics" vs "in Chemistry", can still merge - use merge_method "text" when that matters).
Merging is greedy in reference order: each claim joins
the most similar golden claim it is equivalent to, else starts a new one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Embed = Callable[[Sequence[str]], list[list[float]]]


def normalize_claim(text: str) -> str:
    """Case-, spacing- and punctuation-insensitive form of a claim (or a search query)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def numbers_in(text: str) -> set[str]:
    """Return the numbers a claim states (digits only, separators dropped)."""
    return {re.sub(r"[.,]", "", n) for n in re.findall(r"\d+(?:[.,]\d+)*", text)}


def pyramid_layer(frequency: int, n_references: int) -> int:
    """Layer (1 = top) of a claim found in ``frequency`` of ``n_references`` references."""
    if not 0 <= frequency <= n_references:
        raise ValueError(f"frequency {frequency} outside 0..{n_references}")
    return n_references - frequency + 1


def pyramid_weight(frequency: int, n_references: int) -> int:
    """Return the importance weight ``G + 2 - layer`` (frequency 0 weighs 1)."""
    return n_references + 2 - pyramid_layer(frequency, n_references)


class ClaimMatcher:
    """Decides claim equivalence by normalised text, optionally by embedding cosine too."""

    def __init__(self, embed: Embed | None = None, threshold: float = 0.9) -> None:
        """Use ``embed`` (texts -> vectors) for cosine matching; None = text equality only."""
        self.embed = embed
        self.threshold = threshold
        self._vectors: dict[str, list[float]] = {}

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed, in one batch, every text not embedded yet."""
        if self.embed is None:
            return
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for text, vector in zip(missing, self.embed(missing), strict=True):
                norm = math.sqrt(sum(x * x for x in vector)) or 1.0
                self._vectors[text] = [x / norm for x in vector]

    def similarity(self, a: str, b: str) -> float:
        """1.0 for equal normalised text, else cosine (0.0 without embeddings)."""
        if normalize_claim(a) == normalize_claim(b):
            return 1.0
        if self.embed is None or numbers_in(a) != numbers_in(b):
            return 0.0
        self.prepare([a, b])
        return sum(x * y for x, y in zip(self._vectors[a], self._vectors[b], strict=True))

    def best_match(self, text: str, candidates: Sequence[str]) -> int | None:
        """Index of the most similar equivalent candidate, or None."""
        best, best_sim = None, -1.0
        for i, candidate in enumerate(candidates):
            sim = self.similarity(text, candidate)
            if sim >= self.threshold and sim > best_sim:
                best, best_sim = i, sim
        return best


@dataclass
class GoldenClaim:
    """A merged claim of the golden set with its pyramid position."""

    text: str
    references: set[int] = field(default_factory=set)
    members: list[str] = field(default_factory=list)
    layer: int = 0
    weight: int = 0

    @property
    def frequency(self) -> int:
        """In how many references the claim was found."""
        return len(self.references)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "text": self.text,
            "frequency": self.frequency,
            "layer": self.layer,
            "weight": self.weight,
            "members": list(self.members),
        }


def merge_claims(
    reference_claims: Sequence[Sequence[str]], matcher: ClaimMatcher
) -> list[GoldenClaim]:
    """Merge the claims of G references into the golden set, with layers and weights."""
    n_refs = len(reference_claims)
    matcher.prepare([c for claims in reference_claims for c in claims])
    golden: list[GoldenClaim] = []
    for ref, claims in enumerate(reference_claims):
        for claim in claims:
            hit = matcher.best_match(claim, [g.text for g in golden])
            if hit is None:
                golden.append(GoldenClaim(claim))
                hit = len(golden) - 1
            golden[hit].references.add(ref)
            golden[hit].members.append(claim)
    for g in golden:
        g.layer = pyramid_layer(g.frequency, n_refs)
        g.weight = pyramid_weight(g.frequency, n_refs)
    return golden


def claim_weights(
    claims: Sequence[str], golden: Sequence[GoldenClaim], matcher: ClaimMatcher
) -> list[int]:
    """Weight of each answer claim: its golden match's weight, or 1 without a match."""
    matcher.prepare(list(claims))
    texts = [g.text for g in golden]
    weights = []
    for claim in claims:
        hit = matcher.best_match(claim, texts)
        weights.append(golden[hit].weight if hit is not None else 1)
    return weights


def precision(verdicts: Sequence[bool | None]) -> float | None:
    """Share of judged claims judged true (None when no claim was judged)."""
    judged = [v for v in verdicts if v is not None]
    return sum(judged) / len(judged) if judged else None


def weighted_scores(
    verdicts: Sequence[bool | None],
    weights: Sequence[float],
    golden_mass: float,
    gamma: float = 0.8,
) -> dict[str, float | None]:
    """Weighted precision, recall@gamma and F1@gamma (claims without a verdict are left out).

    ``precision_w = true mass / judged mass``; ``recall@gamma = min(1, true mass / (gamma *
    golden mass))``; ``F1@gamma`` is their harmonic mean, 0 when no claim is true.
    """
    if len(verdicts) != len(weights):
        raise ValueError("verdicts and weights differ in length")
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    true_mass = sum(w for v, w in zip(verdicts, weights, strict=True) if v is True)
    judged_mass = sum(w for v, w in zip(verdicts, weights, strict=True) if v is not None)
    prec = true_mass / judged_mass if judged_mass else None
    recall = min(1.0, true_mass / (gamma * golden_mass)) if golden_mass > 0 else None
    f1: float | None
    if true_mass == 0:
        f1 = 0.0
    elif prec is None or recall is None:
        f1 = None
    else:
        f1 = 2 * prec * recall / (prec + recall)
    return {
        "weighted_precision": prec,
        "recall_at_gamma": recall,
        "f1_at_gamma": f1,
        "true_mass": float(true_mass),
        "golden_mass": float(golden_mass),
    }


def factuality_scores(
    claims: Sequence[str],
    verdicts: Sequence[bool | None],
    reference_claims: Sequence[Sequence[str]] | None = None,
    matcher: ClaimMatcher | None = None,
    gamma: float = 0.8,
) -> tuple[dict[str, Any], list[GoldenClaim]]:
    """All scores of one answer; the weighted ones only when references are given."""
    scores: dict[str, Any] = {
        "n_claims": len(claims),
        "n_true": sum(v is True for v in verdicts),
        "n_false": sum(v is False for v in verdicts),
        "n_unjudged": sum(v is None for v in verdicts),
        "precision": precision(verdicts),
        "gamma": gamma,
        "n_references": len(reference_claims or []),
    }
    if not reference_claims:
        return scores, []
    matcher = matcher or ClaimMatcher()
    golden = merge_claims(reference_claims, matcher)
    weights = claim_weights(claims, golden, matcher)
    golden_mass = float(sum(g.weight for g in golden))
    scores.update(weighted_scores(verdicts, weights, golden_mass, gamma))
    scores["weights"] = weights
    return scores, golden
