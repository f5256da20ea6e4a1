"""DebateCV settings, and those of its evidence-reading baselines (RAG-CoT, Majority)."""

from __future__ import annotations

from dataclasses import dataclass

from nodes.context import EvidenceContext, setting


@dataclass(kw_only=True)
class DebateCVContext(EvidenceContext):
    """DebateCV settings: affirmative vs negative debaters, a moderator (judge model)."""

    moderator_retries: int = setting(
        1, "Extra attempts when the moderator's JSON is invalid (0 = none).", 0, 5
    )


@dataclass(kw_only=True)
class RAGCoTContext(EvidenceContext):
    """RAG-CoT baseline settings: one model, the evidence, step-by-step reasoning, a label."""

    labels: int = setting(4, "Label set: 4 adds CONFLICTING (AVeriTeC); 3 for FEVER-style.", 3, 4)


@dataclass(kw_only=True)
class MajorityContext(RAGCoTContext):
    """Majority baseline: independent RAG-CoT voters; a tie yields NOT ENOUGH INFO."""

    temperature: float = setting(
        0.7, "Sampling temperature; above 0 so the voters are independent.", 0, 2
    )
    voters: int = setting(3, "Independent RAG-CoT votes.", 1, 15)
