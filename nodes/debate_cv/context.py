"""DebateCV settings, and those of its baselines (RAG-CoT, Majority, Cooperation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from factdebate.nodes.context import EvidenceContext, setting


@dataclass(kw_only=True)
class PaperSampling(EvidenceContext):
    """DebateCV's sampling for every model (its App. C): temperature 0.7, top_p 1.0."""

    temperature: float = setting(0.7, "Sampling temperature for every model call.", 0, 2)
    top_p: float = setting(1.0, "Nucleus-sampling top_p for every model call (0 = not sent).", 0, 1)


@dataclass(kw_only=True)
class DebateCVContext(PaperSampling):
    """DebateCV settings: affirmative vs negative debaters, a moderator (judge model)."""

    moderator_retries: int = setting(
        1, "Extra attempts when the moderator's JSON is invalid (0 = none).", 0, 5
    )


@dataclass(kw_only=True)
class RAGCoTContext(PaperSampling):
    """RAG-CoT baseline settings: one model, the evidence, step-by-step reasoning, a label."""

    labels: int = setting(4, "Label set: 4 adds CONFLICTING (AVeriTeC); 3 for FEVER-style.", 3, 4)


@dataclass(kw_only=True)
class MajorityContext(RAGCoTContext):
    """Majority baseline: independent RAG-CoT voters, then a voting step."""

    voters: int = setting(3, "Independent RAG-CoT votes.", 1, 15)
    voting: Literal["model", "count"] = field(
        default="model",
        metadata={
            "description": "'model' = a model reads the votes with a voting prompt and gives "
            "the verdict (the paper's setup); 'count' = the most frequent label, NOT ENOUGH "
            "INFO on a tie."
        },
    )


@dataclass(kw_only=True)
class CooperationContext(RAGCoTContext):
    """Cooperation baseline: a CAMEL-style user directs an assistant doing RAG-CoT."""

    max_turns: int = setting(
        3,
        "Most user-instruction / assistant-answer exchanges; the user may end sooner by "
        "declaring the task done.",
        1,
        10,
    )
