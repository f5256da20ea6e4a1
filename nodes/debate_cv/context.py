"""DebateCV settings, and those of its baselines (RAG-CoT, Majority, Cooperation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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
    """Majority baseline: independent RAG-CoT voters, then a voting step."""

    voters: int = field(default=3, metadata={"description": "Independent RAG-CoT votes."})
    voting: Literal["model", "count"] = field(
        default="model",
        metadata={
            "description": "'model' = a model reads the votes with a voting prompt and gives "
            "the verdict (the paper's setup); 'count' = the most frequent label, NOT ENOUGH "
            "INFO on a tie."
        },
    )

    def __post_init__(self) -> None:
        """Check the number of voters after the shared settings."""
        super().__post_init__()
        if not 1 <= self.voters <= 15:
            raise ValueError(f"voters must be 1..15, got {self.voters}")
        if self.voting not in ("model", "count"):
            raise ValueError(f"voting must be model or count, got {self.voting!r}")


@dataclass(kw_only=True)
class CooperationContext(RAGCoTContext):
    """Cooperation baseline: a CAMEL-style user directs an assistant doing RAG-CoT."""

    max_turns: int = field(
        default=3,
        metadata={
            "description": "Most user-instruction / assistant-answer exchanges; the user may "
            "end sooner by declaring the task done."
        },
    )

    def __post_init__(self) -> None:
        """Check the exchange limit after the shared settings."""
        super().__post_init__()
        if not 1 <= self.max_turns <= 10:
            raise ValueError(f"max_turns must be 1..10, got {self.max_turns}")
