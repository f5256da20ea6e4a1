"""Score node of MAD-Fact: per-claim verdicts -> precision and pyramid-weighted scores."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import settings
from factdebate.nodes.mad_fact.context import MADFactContext
from factdebate.nodes.mad_fact.jury import jury_record
from factdebate.nodes.mad_fact.merge import model_matcher
from factdebate.nodes.mad_fact.state import ClaimResult, MADFactState
from factdebate.tools.scoring.factuality import ClaimMatcher, Embed, factuality_scores


def default_embed(texts: Sequence[str]) -> list[list[float]]:
    """MiniLM sentence embeddings (the project's shared embedding model)."""
    from factdebate.tools.retrieval.embeddings import default_embeddings

    return default_embeddings().embed_documents(list(texts))


def make_matcher(ctx: MADFactContext, embed: Embed | None = None) -> ClaimMatcher:
    """Claim equivalence without a model: text equality, or text equality or cosine."""
    if ctx.merge_method != "embedding":
        return ClaimMatcher(None, ctx.merge_threshold)
    return ClaimMatcher(embed or default_embed, ctx.merge_threshold)


def verdict_of(value: str | None) -> bool | None:
    """TRUE/FALSE label -> bool; no verdict stays None."""
    return None if value is None else value == "TRUE"


async def score_answer(state: MADFactState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Collect the jury verdicts in answer order and compute the answer's scores."""
    ctx = settings(runtime, MADFactContext)
    results = [
        ClaimResult(**r)
        for r in sorted(state.get("claim_results", []), key=lambda r: r.get("claim_id", 0))
    ]
    claims = [r.get("claim", "") for r in results]
    verdicts = [verdict_of(r.get("verdict")) for r in results]
    reference_claims = state.get("reference_claims") or []
    update: dict[str, Any] = {}
    matcher: ClaimMatcher
    if ctx.merge_method == "model" and reference_claims:
        matcher, cost, errors = await model_matcher(ctx, reference_claims, claims)
        update.update(cost=cost, errors=errors)
    else:
        matcher = make_matcher(ctx)
    # Embedding (and loading the embedding model) blocks: keep it off the event loop.
    scores, golden = await asyncio.to_thread(
        factuality_scores, claims, verdicts, reference_claims, matcher, ctx.gamma
    )
    for result, weight in zip(results, scores.get("weights", []), strict=False):
        result["weight"] = weight
    n_true, n = scores["n_true"], len(claims)
    if not claims:
        verdict, stop = None, "no_claims"
        summary = "No checkable claims were found in the answer."
    else:
        # The answer is factual when every claim is true; one false claim makes it not;
        # otherwise (claims left without a verdict) there is no answer-level verdict.
        verdict = (
            "NOT FACTUAL" if scores["n_false"] else "FACTUAL" if scores["n_unjudged"] == 0 else None
        )
        # A jury cut short by the per-claim budget still counts, but the run says so.
        budget_cut = any(r.get("stop_reason") == "budget_exhausted" for r in results)
        stop = "budget_exhausted" if budget_cut else "scored"
        summary = f"{n_true} of {n} claims judged true"
        if scores["precision"] is not None:
            summary += f" (precision {scores['precision']:.2f})"
        if scores.get("f1_at_gamma") is not None:
            summary += (
                f"; weighted precision {scores['weighted_precision'] or 0:.2f}, "
                f"recall@{ctx.gamma:g} {scores['recall_at_gamma']:.2f}, "
                f"F1@{ctx.gamma:g} {scores['f1_at_gamma']:.2f}"
            )
        summary += "."
    return {
        **update,
        "claims": results,
        "scores": scores,
        "golden": [g.as_dict() for g in golden],
        "verdict": verdict,
        "justification": summary,
        "decided_by": jury_record(results, verdict, stop),
        "stop_reason": stop,
        "rounds": max((r.get("rounds", 0) for r in results), default=0),
    }
