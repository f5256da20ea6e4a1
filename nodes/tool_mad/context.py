"""Tool-MAD settings: tools per debater, query formulation, stability thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from factdebate.nodes.context import Context, ToolName, setting

NeiRelevance = Literal["ragas", "cosine"]


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
    nei_relevance: NeiRelevance = field(
        default="ragas",
        metadata={
            "description": "How answer relevance scores an answer labelled NOT ENOUGH INFO: "
            "'ragas' (the paper's RAGAS rule) = 0 when every question written back from it is "
            "flagged noncommittal, so such an answer never passes the stability check; "
            "'cosine' = the mean cosine between the claim and those questions, noncommittal "
            "flag ignored, so a well-supported NOT ENOUGH INFO agreement can stop the debate. "
            "Other labels are scored by the RAGAS rule either way. Effect on accuracy "
            "unmeasured with a capable model."
        },
    )
