"""Clerk: split an answer (and reference answers) into atomic, checkable claims."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from factdebate.nodes.claims import InputError, clean_claim
from factdebate.nodes.common import model_for, settings
from factdebate.nodes.mad_fact.context import MADFactContext
from factdebate.nodes.mad_fact.state import MADFactState
from factdebate.prompts import mad_fact as prompts
from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs
from factdebate.tools.models.llm import CallSite, ask, ask_structured
from factdebate.tools.scoring.factuality import normalize_claim


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


_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?])\s+"))


def split_parts(text: str, max_chars: int) -> list[str]:
    """Cut ``text`` into parts of at most ``max_chars``, keeping its order.

    Cuts fall at paragraph ends, else line ends, else sentence ends; a single sentence longer
    than ``max_chars`` is cut at a space.
    """
    if len(text) <= max_chars:
        return [text]
    for pattern in _BREAKS:
        pieces = [p for p in pattern.split(text) if p.strip()]
        if len(pieces) > 1:
            break
    else:
        cut = text.rfind(" ", 0, max_chars)
        cut = cut if cut > 0 else max_chars
        return [text[:cut], *split_parts(text[cut:].lstrip(), max_chars)]
    parts: list[str] = []
    current = ""
    for piece in pieces:
        if len(piece) > max_chars:
            if current:
                parts.append(current)
                current = ""
            parts.extend(split_parts(piece, max_chars))
        elif current and len(current) + 1 + len(piece) > max_chars:
            parts.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    if current:
        parts.append(current)
    return parts


async def decompose(
    model: BaseChatModel, question: str, text: str, site: CallSite, part_chars: int = 100_000
) -> tuple[list[str], list[str], dict[str, RoleCost], list[ErrorRecord]]:
    """Ask the clerk for the claims of ``text``, part by part when it is long.

    Parts (see ``split_parts``) are decomposed concurrently and their claims joined in the
    answer's order; a part whose output cannot be read yields no claims (recorded). When no
    part yields a checkable claim, the text's checkable sentences stand in: the parse
    failures stay recorded and ``split_fallback`` adds a ``split_without_model`` record.
    """
    replies = await asyncio.gather(
        *(
            ask_structured(
                model,
                prompts.CLERK.format(question=question or "(not given)", answer=part),
                ClaimList,
                site,
            )
            for part in split_parts(text, part_chars)
        )
    )
    claims: list[str] = []
    cost: dict[str, RoleCost] = {}
    errors: list[ErrorRecord] = []
    for parsed, reply in replies:
        cost = add_costs(cost, reply.cost)
        errors.extend(reply.errors)
        if parsed is not None:
            claims.extend(parsed.claims)
    kept, dropped = keep_checkable(claims)
    if kept:
        return kept, dropped, cost, errors
    readable = any(parsed is not None for parsed, _ in replies)
    reason = "the clerk listed no claim" if readable else "no readable clerk output"
    split, split_dropped, note = split_fallback(text, site.agent, reason)
    if readable and not split:
        return kept, dropped, cost, errors  # nothing checkable either way
    return split, split_dropped, cost, [*errors, note]


SPLIT_WITHOUT_MODEL = "split_without_model"  # error kind marking claims the clerk did not write


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (pysbd's rule-based English splitter: no model, no data files)."""
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)
    return [" ".join(s.split()) for s in segmenter.segment(text) if s.strip()]


def split_fallback(
    text: str, agent: str, reason: str = "no readable clerk output"
) -> tuple[list[str], list[str], ErrorRecord]:
    """Claims for ``text`` when the clerk's output is unusable: its checkable sentences.

    Returns the kept and dropped sentences and a record saying they were split without the
    model (so the claims are not mistaken for the clerk's atomic claims).
    """
    kept, dropped = keep_checkable(split_sentences(text))
    note = ErrorRecord(
        agent=agent,
        stage="decompose",
        kind=SPLIT_WITHOUT_MODEL,
        message=f"{reason}: split into {len(kept)} sentence claim(s) without the model",
    )
    return kept, dropped, note


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

    async def one(name: str) -> tuple[str | None, Any]:
        model = await model_for(ctx, "expert", name)
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
            decompose(
                model,
                question,
                text,
                ctx.site(role="clerk", agent=agent, stage="decompose"),
                ctx.clerk_part_chars,
            )
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
        "split_without_model": any(e.get("kind") == SPLIT_WITHOUT_MODEL for e in results[0][3]),
        "dropped": dropped,
        "reference_claims": [r[0] for r in results[1:]],
        "run_key": uuid.uuid4().hex,
        "cost": cost,
        "errors": errors,
    }
