"""Tool-MAD settings: tools per debater, query formulation, stability thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field

from nodes.context import Context, ToolName


@dataclass(kw_only=True)
class ToolMADContext(Context):
    """Tool-MAD settings (defaults follow the paper; every ablation is one field)."""

    tool_a: ToolName = field(
        default="rag", metadata={"description": "Tool of debater A: rag, search or none."}
    )
    tool_b: ToolName = field(
        default="search", metadata={"description": "Tool of debater B: rag, search or none."}
    )
    query_formulation: bool = field(
        default=True,
        metadata={
            "description": "Debaters write/rewrite their queries; off = the claim is the query."
        },
    )
    stability_score: bool = field(
        default=True,
        metadata={
            "description": "Require RAGAS scores over thresholds to stop early; "
            "off = consensus alone."
        },
    )
    faithfulness_threshold: float = field(
        default=0.7, metadata={"description": "Minimum faithfulness for an early stop."}
    )
    relevance_threshold: float = field(
        default=0.8, metadata={"description": "Minimum answer relevance for an early stop."}
    )
    relevance_strictness: int = field(
        default=3,
        metadata={"description": "Questions generated back from an answer for answer relevance."},
    )
    relevance_temperature: float = field(
        default=0.7,
        metadata={
            "description": "Sampling temperature of those question calls (above 0, so they are "
            "different questions; they run concurrently)."
        },
    )

    def __post_init__(self) -> None:
        """Check the Tool-MAD settings after the shared ones."""
        super().__post_init__()
        for name in ("tool_a", "tool_b"):
            if getattr(self, name) not in ("rag", "search", "none"):
                raise ValueError(f"{name} must be rag, search or none, got {getattr(self, name)!r}")
        for name in ("faithfulness_threshold", "relevance_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        if not 1 <= self.relevance_strictness <= 10:
            raise ValueError(f"relevance_strictness must be 1..10, got {self.relevance_strictness}")
        if not 0.0 <= self.relevance_temperature <= 2.0:
            raise ValueError(
                f"relevance_temperature must be 0..2, got {self.relevance_temperature}"
            )
