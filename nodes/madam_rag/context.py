"""MADAM-RAG settings (defaults follow the paper: T = 3, one agent per document)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nodes.context import Context

RoundInput = Literal["agents", "aggregator"]


@dataclass(kw_only=True)
class MadamContext(Context):
    """MADAM-RAG settings (defaults follow the paper: T = 3, one agent per document)."""

    top_k: int = field(
        default=5,
        metadata={
            "description": "Documents retrieved when the caller gives none (one agent each)."
        },
    )
    max_documents: int = field(
        default=20,
        metadata={
            "description": "Most documents (and so agents) per question; extra ones are "
            "dropped and the drop is recorded in errors."
        },
    )
    max_concurrency: int = field(
        default=20,
        metadata={
            "description": "Most document agents calling the model at once within one run "
            "(an asyncio.Semaphore per run); the default lets every agent of a question "
            "(up to max_documents) run in one wave."
        },
    )
    round_input: RoundInput = field(
        default="agents",
        metadata={
            "description": "What an agent sees from round 2 on besides its document: 'agents' "
            "= the other agents' answers and explanations of the previous round (official "
            "code and the paper's appendix prompt, which produced its tables); 'aggregator' "
            "= the aggregator's previous answers and explanation (the paper's section 4)."
        },
    )
    seed: int = field(
        default=0,
        metadata={
            "description": "Seed of the aggregator's shuffle: round t uses "
            "random.Random(seed + t), so runs are reproducible."
        },
    )
    reflection_rounds: int = field(
        default=2,
        metadata={"description": "Review-and-refine rounds of the self-reflection baseline."},
    )

    def __post_init__(self) -> None:
        """Check the MADAM-RAG settings after the shared ones."""
        super().__post_init__()
        for name in ("max_documents", "max_concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.round_input not in ("agents", "aggregator"):
            raise ValueError(f"round_input must be agents or aggregator, got {self.round_input!r}")
        if self.reflection_rounds < 0:
            raise ValueError(f"reflection_rounds must be >= 0, got {self.reflection_rounds}")
