"""Entry points for long-form factuality: score an answer, evaluate a claim checker."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from factdebate.datasets import AtomicClaimItem
from factdebate.metrics import binary_metrics

Checker = Literal["mad-fact", "single-verifier"]


async def ascore_answer(
    answer: str, question: str = "", references: Sequence[str] | None = None, **settings: Any
) -> dict[str, Any]:
    """Run MAD-Fact on one answer; ``settings`` are ``MADFactContext`` fields.

    Returns the result contract plus ``claims`` (per-claim verdicts), ``dropped``,
    ``scores`` and ``golden``.
    """
    from graphs.mad_fact import graph
    from nodes.mad_fact.context import MADFactContext
    from nodes.mad_fact.state import AnswerInput

    payload = AnswerInput(question=question, answer=answer, references=list(references or []))
    result = await graph.ainvoke(payload, context=MADFactContext(**settings))
    return dict(result)


def score_answer(
    answer: str, question: str = "", references: Sequence[str] | None = None, **settings: Any
) -> dict[str, Any]:
    """Synchronous ``ascore_answer``."""
    return asyncio.run(ascore_answer(answer, question, references, **settings))


async def acheck_claim(
    claim: str, checker: Checker = "mad-fact", question: str = "", **settings: Any
) -> tuple[bool | None, dict[str, Any]]:
    """Judge one atomic claim with the jury or the single verifier: (factual?, raw output)."""
    if checker == "mad-fact":
        from graphs.jury import graph as jury
        from nodes.mad_fact.context import MADFactContext

        out = await jury.ainvoke(
            {"claim": claim, "question": question}, context=MADFactContext(**settings)
        )
        verdict = (out.get("claim_results") or [{}])[0].get("verdict")
    elif checker == "single-verifier":
        from graphs.single_verifier import graph as verifier
        from nodes.mad_fact.context import SingleVerifierContext

        out = await verifier.ainvoke({"claim": claim}, context=SingleVerifierContext(**settings))
        verdict = out.get("verdict")
    else:
        raise ValueError(f"unknown checker {checker!r}: mad-fact or single-verifier")
    return (None if verdict is None else verdict == "TRUE"), out


async def aevaluate_checker(
    items: Sequence[AtomicClaimItem],
    checker: Checker = "mad-fact",
    concurrency: int = 4,
    **settings: Any,
) -> dict[str, Any]:
    """Per-class P/R/F1 (TRUE and FALSE) of a checker on labelled atomic claims.

    Use with ``load_factcheck_bench().items`` or ``load_factool_qa().items``. Claims
    without a readable verdict count as wrong (``metrics["unparsed"]``).
    """
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(item: AtomicClaimItem) -> tuple[bool | None, dict[str, Any]]:
        async with limit:
            return await acheck_claim(
                item.claim, checker, str(item.meta.get("question") or ""), **settings
            )

    outputs = await asyncio.gather(*(one(item) for item in items))
    preds = [pred for pred, _ in outputs]
    return {
        "checker": checker,
        "metrics": binary_metrics([item.label for item in items], preds),
        "predictions": [
            {
                "id": item.id,
                "claim": item.claim,
                "gold": item.label,
                "pred": pred,
                "errors": out.get("errors", []),
            }
            for item, (pred, out) in zip(items, outputs, strict=True)
        ],
    }
