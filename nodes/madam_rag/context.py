"""MADAM-RAG settings (defaults follow the paper: T = 3, one agent per document)."""

from __future__ import annotations

from dataclasses import dataclass

from nodes.context import Context, setting


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
        4,
        "Most document agents calling the model at once within one run (an asyncio.Semaphore "
        "per run).",
        1,
        64,
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
