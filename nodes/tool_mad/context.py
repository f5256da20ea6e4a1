"""Tool-MAD settings: tools per debater, query formulation, stability thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from factdebate.nodes.context import Context, ToolName, setting
from factdebate.nodes.tool_mad.gate import (
    SHIPPED_ENCODER,
    GateProfileName,
    Thresholds,
    gate_thresholds,
)

NeiRelevance = Literal["ragas", "cosine"]
ScoreFailure = Literal["fail", "unscored"]


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
    gate_profile: GateProfileName = field(
        default="auto",
        metadata={
            "description": "Stability thresholds by name: 'paper' = faithfulness 0.7, answer "
            "relevance 0.8 (the paper's, chosen for its own encoder); 'minilm' = 0.7 / 0.63 "
            "(calibrated for the shipped MiniLM on 24 recorded debates); 'auto' = the profile "
            "calibrated for relevance_encoder, 'paper' when there is none."
        },
    )
    faithfulness_threshold: float = setting(
        -1.0, "Minimum faithfulness for an early stop; negative = gate_profile's.", -1, 1
    )
    relevance_threshold: float = setting(
        -1.0, "Minimum answer relevance for an early stop; negative = gate_profile's.", -1, 1
    )
    relevance_encoder: str = field(
        default=SHIPPED_ENCODER,
        metadata={
            "description": "Encoder of answer relevance (apart from the 'rag' tool's): the "
            "shipped MiniLM, any sentence-transformers id or folder, or provider embeddings "
            "such as 'openai:text-embedding-3-small' (LangChain init_embeddings). Recorded "
            "beside every relevance score."
        },
    )
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
        default="cosine",
        metadata={
            "description": "How answer relevance scores an answer labelled NOT ENOUGH INFO: "
            "'cosine' (the paper's formula) = the mean cosine between the claim and the "
            "questions written back from the answer, so a well-supported NOT ENOUGH INFO "
            "agreement can stop the debate; 'ragas' (RAGAS's implementation) = 0 when every "
            "such question is flagged noncommittal, so it never passes the stability check. "
            "Other labels are scored by the RAGAS rule either way. Default from 24 recorded "
            "debates, held out: same accuracy, 16.4 calls per claim against 23.7 "
            "(docs/methods/tool-mad.md)."
        },
    )
    score_failure: ScoreFailure = field(
        default="fail",
        metadata={
            "description": "When a scoring call of a debater's turn brings no reply after its "
            "retries (a rate limit, a timeout, a provider error): 'fail' = the claim stops "
            "without a verdict, stop reason model_failure (a failed item, which a bench rerun "
            "retries); 'unscored' = that turn is judged without its scores, so debaters who "
            "agree stop there. Never: another round run because a score is missing."
        },
    )

    def thresholds(self) -> Thresholds:
        """The stability thresholds in force: the profile's, or the explicit settings."""
        return gate_thresholds(
            self.gate_profile,
            self.relevance_encoder,
            self.faithfulness_threshold,
            self.relevance_threshold,
        )
