"""Tool-MAD settings: tools per debater, query formulation, stability thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field

from nodes.context import Context, ToolName, setting


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
    faithfulness_threshold: float = setting(0.7, "Minimum faithfulness for an early stop.", 0, 1)
    relevance_threshold: float = setting(0.8, "Minimum answer relevance for an early stop.", 0, 1)
    relevance_strictness: int = setting(
        3, "Questions generated back from an answer for answer relevance.", 1, 10
    )
    relevance_temperature: float = setting(
        0.7,
        "Sampling temperature of those question calls (above 0, so they are different "
        "questions; they run concurrently).",
        0,
        2,
    )
