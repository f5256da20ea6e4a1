"""DebateCV settings, and those of its evidence-reading baselines (RAG-CoT, Majority)."""

from __future__ import annotations

from dataclasses import dataclass, field

from nodes.context import EvidenceContext


@dataclass(kw_only=True)
class PaperSampling(EvidenceContext):
    """DebateCV's sampling for every model (its App. C): temperature 0.7, top_p 1.0."""

    temperature: float = field(
        default=0.7, metadata={"description": "Sampling temperature for every model call."}
    )
    top_p: float = field(
        default=1.0,
        metadata={"description": "Nucleus-sampling top_p for every model call (0 = not sent)."},
    )


@dataclass(kw_only=True)
class DebateCVContext(PaperSampling):
    """DebateCV settings: affirmative vs negative debaters, a moderator (judge model)."""

    moderator_retries: int = field(
        default=1,
        metadata={"description": "Extra attempts when the moderator's JSON is invalid (0 = none)."},
    )

    def __post_init__(self) -> None:
        """Check the retry budget after the shared settings."""
        super().__post_init__()
        if not 0 <= self.moderator_retries <= 5:
            raise ValueError(f"moderator_retries must be 0..5, got {self.moderator_retries}")


@dataclass(kw_only=True)
class RAGCoTContext(PaperSampling):
    """RAG-CoT baseline settings: one model, the evidence, step-by-step reasoning, a label."""

    labels: int = field(
        default=4,
        metadata={"description": "Label set: 4 adds CONFLICTING (AVeriTeC); 3 for FEVER-style."},
    )

    def __post_init__(self) -> None:
        """Check the label set after the shared settings."""
        super().__post_init__()
        if self.labels not in (3, 4):
            raise ValueError(f"labels must be 3 or 4, got {self.labels}")


@dataclass(kw_only=True)
class MajorityContext(RAGCoTContext):
    """Majority baseline: independent RAG-CoT voters; a tie yields NOT ENOUGH INFO."""

    voters: int = field(default=3, metadata={"description": "Independent RAG-CoT votes."})

    def __post_init__(self) -> None:
        """Check the number of voters after the shared settings."""
        super().__post_init__()
        if not 1 <= self.voters <= 15:
            raise ValueError(f"voters must be 1..15, got {self.voters}")
