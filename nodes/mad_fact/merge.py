"""Claim equivalence decided by a model: the golden-set merge and answer-claim weights."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from factdebate.nodes.common import model_for
from factdebate.nodes.mad_fact.context import MADFactContext
from factdebate.prompts import mad_fact as prompts
from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs
from factdebate.tools.models.llm import CallSite, ask_structured
from factdebate.tools.scoring.factuality import ClaimMatcher, normalize_claim


class Matches(BaseModel):
    """The merger's structured output."""

    matches: list[int] = Field(
        description="For each new claim in order: the number of the known claim stating the "
        "same fact, or 0."
    )


class DecidedMatcher(ClaimMatcher):
    """Equivalence decided beforehand: equal normalised text, or a pair the model matched."""

    def __init__(self, pairs: set[tuple[str, str]]) -> None:
        """``pairs`` holds (claim, known claim) pairs judged to state the same fact."""
        super().__init__(None, threshold=1.0)
        self.pairs = pairs

    def similarity(self, a: str, b: str) -> float:
        """1.0 for equal normalised text or a matched pair, else 0.0."""
        same = normalize_claim(a) == normalize_claim(b) or (a, b) in self.pairs
        return 1.0 if same else 0.0


def numbered(claims: Sequence[str]) -> str:
    """Claims as a numbered list, one per line."""
    return "\n".join(f"{i}. {' '.join(c.split())}" for i, c in enumerate(claims, 1))


async def match_to(
    model: BaseChatModel, known: list[str], new: list[str], site: CallSite
) -> tuple[list[tuple[str, str]], dict[str, RoleCost], list[ErrorRecord]]:
    """Ask which known claim each new claim restates; unreadable output matches nothing."""
    prompt = prompts.MERGE.format(known=numbered(known), new=numbered(new))
    parsed, reply = await ask_structured(model, prompt, Matches, site)
    errors = list(reply.errors)
    if parsed is None:
        return [], reply.cost, errors
    bad = len(parsed.matches) != len(new) or any(not 0 <= m <= len(known) for m in parsed.matches)
    if bad:
        message = f"expected {len(new)} numbers in 0..{len(known)}, got {parsed.matches}"
        errors.append(site.error("parse_error", message, reply.text or ""))
        return [], reply.cost, errors
    pairs = [(c, known[m - 1]) for c, m in zip(new, parsed.matches, strict=True) if m]
    return pairs, reply.cost, errors


def _hit(claim: str, golden: list[str], pairs: set[tuple[str, str]]) -> bool:
    key = normalize_claim(claim)
    return any(normalize_claim(g) == key or (claim, g) in pairs for g in golden)


async def model_matcher(
    ctx: MADFactContext, reference_claims: Sequence[Sequence[str]], answer_claims: Sequence[str]
) -> tuple[DecidedMatcher, dict[str, RoleCost], list[ErrorRecord]]:
    """Decide, with the judge model, which claims state the same fact.

    References are merged in order as ``factuality.merge_claims`` does: each
    reference's claims are compared with the golden claims so far (one call per reference
    after the first), then the answer's claims with the whole golden set (one call). Claims
    equal as normalised text need no call.
    """
    model = await model_for(ctx, "judge")
    pairs: set[tuple[str, str]] = set()
    golden: list[str] = []
    cost: dict[str, RoleCost] = {}
    errors: list[ErrorRecord] = []

    async def compare(claims: Sequence[str], agent: str) -> None:
        nonlocal cost
        new = [c for c in claims if not _hit(c, golden, pairs)]
        if not golden or not new:
            return
        site = ctx.site(role="merger", agent=agent, stage="merge")
        found, spent, failed = await match_to(model, list(golden), new, site)
        pairs.update(found)
        cost = add_costs(cost, spent)
        errors.extend(failed)

    for i, claims in enumerate(reference_claims, 1):
        await compare(claims, f"merger:reference{i}")
        golden.extend(c for c in claims if not _hit(c, golden, pairs))
    await compare(answer_claims, "merger:answer")
    return DecidedMatcher(pairs), cost, errors
