"""MADAM-RAG settings (defaults follow the paper: T = 3, one agent per document)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from factdebate.nodes.context import Context, setting

RoundInput = Literal["agents", "aggregator"]


@dataclass(kw_only=True)
class MadamContext(Context):
    """MADAM-RAG settings (defaults follow the paper: T = 3, one agent per document)."""

    top_k: int = setting(
        5, "Documents retrieved when the caller gives none (one agent each).", 1, 100
    )
    max_documents: int = setting(
        20,
        "Most documents (and so agents) per question; extra ones are dropped and the drop is "
        "recorded in errors.",
        1,
        100,
    )
    max_concurrency: int = setting(
        20,
        "Most document agents calling the model at once within one run (an asyncio.Semaphore "
        "per run); the default lets every agent of a question (up to max_documents) run in one "
        "wave.",
        1,
        64,
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
    seed: int = setting(
        0,
        "Seed of the aggregator's shuffle: round t uses random.Random(seed + t), so runs are "
        "reproducible.",
        0,
        2**31 - 1,
    )
    reflection_rounds: int = setting(
        2, "Review-and-refine rounds of the self-reflection baseline.", 0, 10
    )
