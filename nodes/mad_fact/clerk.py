"""Clerk: split an answer (and reference answers) into atomic, checkable claims."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from nodes.claims import InputError, clean_claim
from nodes.common import model_for, settings
from nodes.mad_fact.context import MADFactContext
from nodes.mad_fact.state import MADFactState
from prompts import mad_fact as prompts
from tools.factuality import normalize_claim
from tools.llm import CallSite, ask, ask_structured
from tools.records import ErrorRecord, RoleCost, add_costs


class ClaimList(BaseModel):
    """The clerk's structured output."""

    claims: list[str] = Field(description="Atomic, self-contained, checkable claims.")


# A guard behind the model: sentences that are advice, instructions, opinions or questions
# are dropped even when the clerk keeps them.
_NOT_CHECKABLE = re.compile(
    r"^(?:you\s+(?:should|must|need|may\s+want|might\s+want|can\s+try)|"
    r"(?:please|consider|try|make\s+sure|remember|be\s+sure|don't|do\s+not|always|never)\b|"
    r"(?:it\s+is|it's)\s+(?:recommended|advisable|best|important\s+to)|"
    r"i\s+(?:think|believe|feel|recommend|suggest)|in\s+my\s+(?:opinion|view)|"
    r"(?:personally|hopefully|overall,\s+i)\b|"
    r"(?:i\s+hope|let\s+me\s+know|feel\s+free|i\s+hope\s+this))",
    re.IGNORECASE,
)
_MIN_WORDS = 3


def is_checkable(text: str) -> bool:
    """Whether a clerk claim states a checkable fact (not advice, opinion or a question)."""
    stripped = text.strip().strip("-*• ").strip()
    if len(stripped.split()) < _MIN_WORDS or stripped.endswith("?"):
        return False
    return not _NOT_CHECKABLE.match(stripped)


def keep_checkable(claims: list[str]) -> tuple[list[str], list[str]]:
    """Split clerk output into (kept, dropped); duplicates and empty items are dropped."""
    kept: list[str] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for raw in claims:
        claim = " ".join(str(raw).split())
        key = normalize_claim(claim)
        if not key or key in seen:
            continue
        if is_checkable(claim):
            seen.add(key)
            kept.append(claim)
        else:
            dropped.append(claim)
    return kept, dropped


async def decompose(
    model: BaseChatModel, question: str, text: str, site: CallSite
) -> tuple[list[str], list[str], dict[str, RoleCost], list[ErrorRecord]]:
    """Ask the clerk for the claims of ``text``; a parse failure yields no claims (recorded)."""
    prompt = prompts.CLERK.format(question=question or "(not given)", answer=text)
    parsed, reply = await ask_structured(model, prompt, ClaimList, site)
    if parsed is None:
        return [], [], reply.cost, list(reply.errors)
    kept, dropped = keep_checkable(parsed.claims)
    return kept, dropped, reply.cost, list(reply.errors)


async def write_references(state: MADFactState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Validate the input; when no references are given, let the expert models write them."""
    ctx = settings(runtime, MADFactContext)
    question = (
        clean_claim(state.get("question") or "", ctx.max_answer_chars)
        if (state.get("question") or "").strip()
        else ""
    )
    try:
        answer = clean_claim(state.get("answer"), ctx.max_answer_chars)
    except InputError as exc:
        raise InputError(str(exc).replace("the claim", "the answer")) from exc
    references = [
        clean_claim(r, ctx.max_answer_chars)
        for r in state.get("references") or []
        if isinstance(r, str) and r.strip()
    ]
    update: dict[str, Any] = {"question": question, "answer": answer, "references": references}
    if references or not ctx.expert_models:
        return update
    if not question:
        error = ErrorRecord(
            agent="experts",
            stage="references",
            kind="input_error",
            message="expert references need a question; none was given",
        )
        return {**update, "errors": [error]}
    from tools.models import resolve_model

    async def one(name: str) -> tuple[str | None, Any]:
        model = await asyncio.to_thread(
            resolve_model,
            name,
            temperature=ctx.temperature,
            max_tokens=ctx.max_output_tokens,
            timeout=ctx.call_timeout_s,
        )
        reply = await ask(
            model,
            prompts.EXPERT.format(question=question),
            site=ctx.site(role="expert", agent=f"expert:{name}", stage="references"),
        )
        return reply.text, reply

    results = await asyncio.gather(*(one(name) for name in ctx.expert_models))
    cost: dict[str, RoleCost] = {}
    errors: list[ErrorRecord] = []
    for text, reply in results:
        cost = add_costs(cost, reply.cost)
        errors.extend(reply.errors)
        if text and text.strip():
            references.append(" ".join(text.split())[: ctx.max_answer_chars])
    return {**update, "references": references, "cost": cost, "errors": errors}


async def clerk(state: MADFactState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Decompose the answer and every reference answer (concurrently)."""
    ctx = settings(runtime, MADFactContext)
    model = await model_for(ctx, "clerk")
    question = state.get("question", "")
    texts = [state["answer"], *state.get("references", [])]
    agents = ["clerk", *(f"clerk:reference{i}" for i in range(1, len(texts)))]
    results = await asyncio.gather(
        *(
            decompose(model, question, text, ctx.site(role="clerk", agent=agent, stage="decompose"))
            for text, agent in zip(texts, agents, strict=True)
        )
    )
    cost: dict[str, RoleCost] = {}
    errors: list[ErrorRecord] = []
    for _, _, c, e in results:
        cost = add_costs(cost, c)
        errors.extend(e)
    claims, dropped = results[0][0], results[0][1]
    too_long = [c for c in claims if len(c) > ctx.max_claim_chars]
    if too_long:
        errors.append(
            ErrorRecord(
                agent="clerk",
                stage="decompose",
                kind="claim_too_long",
                message=f"dropped {len(too_long)} claim(s) over {ctx.max_claim_chars} characters",
            )
        )
        claims = [c for c in claims if len(c) <= ctx.max_claim_chars]
        dropped = dropped + too_long
    if len(claims) > ctx.max_claims:
        errors.append(
            ErrorRecord(
                agent="clerk",
                stage="decompose",
                kind="truncated",
                message=f"{len(claims)} claims; checked the first {ctx.max_claims}",
            )
        )
        claims = claims[: ctx.max_claims]
    return {
        "claim_texts": claims,
        "dropped": dropped,
        "reference_claims": [r[0] for r in results[1:]],
        "next_claim": 0,
        "cost": cost,
        "errors": errors,
    }
