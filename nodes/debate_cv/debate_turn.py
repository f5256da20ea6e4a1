"""Evidence preparation and the two DebateCV debaters (affirmative opens, negative rebuts)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.claims import clean_claim, given_documents
from factdebate.nodes.common import Node, answer_or_placeholder, model_for, settings
from factdebate.nodes.context import EvidenceContext
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.nodes.debate_cv.state import DebateCVState
from factdebate.nodes.evidence_block import render_evidence
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import Turn
from factdebate.prompts import debate_cv as prompts
from factdebate.tools.core.records import Evidence
from factdebate.tools.models.llm import ask

Side = Literal["affirmative", "negative"]
_CITE_RE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def given_evidence(raw: object) -> list[Evidence]:
    """User-supplied evidence, checked (see ``given_documents``)."""
    return given_documents(raw, "evidence item")


def make_prepare_node(cls: type[EvidenceContext]) -> Node:
    """Node that cleans the claim and fixes the evidence set: given, else retrieved once."""

    async def prepare(state: dict[str, Any], runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = settings(runtime, cls)
        claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
        raw = state.get("evidence")
        if raw is not None:  # an explicit empty list is the no-evidence condition
            return {"claim": claim, "evidence": given_evidence(raw)}
        docs, errors = await retrieve_or_record(
            ctx, ctx.evidence_tool, claim, agent="retriever", round_no=0, claim=claim
        )
        return {"claim": claim, "evidence": docs, "errors": errors}

    return prepare


def cited(answer: str, docs: Sequence[Evidence]) -> list[Evidence]:
    """Return the documents an argument cites as ``[n]`` (1-based, in order of first citation)."""
    seen: list[int] = []
    for match in _CITE_RE.finditer(answer):
        for part in match.group(1).split(","):
            n = int(part)
            if 1 <= n <= len(docs) and n not in seen:
                seen.append(n)
    return [docs[n - 1] for n in seen]


def debater_setup(claim: str, docs: Sequence[Evidence], max_doc_chars: int) -> str:
    """Write the part of every debater prompt that sets the scene: rules, claim, documents."""
    return prompts.DEBATER_SETUP.format(
        evidence_rules=prompts.EVIDENCE_RULES,
        claim=claim,
        evidence=render_evidence(docs, max_doc_chars),
    )


def render_dialogue(transcript: list[Turn], max_chars: int) -> str:
    """The debaters' arguments so far, in the order they were made (sanitised, capped)."""
    turns = [t for t in transcript if t.get("agent") in ("affirmative", "negative")]
    if not turns:
        return "(no arguments yet)"
    return "\n\n".join(
        f'<argument round="{t.get("round")}" side="{t.get("agent")}">\n'
        f"{answer_or_placeholder(t, max_chars)}\n</argument>"
        for t in turns
    )


def debater_prompt(
    side: Side, state: DebateCVState, round_no: int, setup: str, max_chars: int
) -> str:
    """Write the prompt of ``side`` in ``round_no``: opening, or a reply to the whole dialogue."""
    dialogue = render_dialogue(state.get("transcript", []), max_chars)
    if side == "negative":
        return prompts.NEGATIVE_REPLY.format(setup=setup, dialogue=dialogue)
    if round_no == 1:
        return prompts.AFFIRMATIVE_OPENING.format(setup=setup)
    return prompts.AFFIRMATIVE_REPLY.format(setup=setup, dialogue=dialogue)


def make_debater_node(side: Side) -> Node:
    """Build the node of one debater; the affirmative opens each round."""

    async def debate_turn(
        state: DebateCVState, runtime: Runtime[DebateCVContext]
    ) -> dict[str, Any]:
        ctx = settings(runtime, DebateCVContext)
        round_no = state.get("round", 0) + (1 if side == "affirmative" else 0)
        docs = state.get("evidence", [])
        setup = debater_setup(state["claim"], docs, ctx.max_doc_chars)
        prompt = debater_prompt(side, state, round_no, setup, ctx.max_doc_chars)
        model = await model_for(ctx, "debater")
        reply = await ask(
            model,
            prompt,
            site=ctx.site(role="debater", agent=side, stage="argue", round_no=round_no),
        )
        answer = reply.text or ""
        turn = Turn(
            round=round_no,
            agent=side,
            tool=docs[0]["source"] if docs else "none",
            evidence=cited(answer, docs),
            answer=answer,
            label=None,
        )
        update: dict[str, Any] = {"transcript": [turn], "cost": reply.cost, "errors": reply.errors}
        if side == "affirmative":
            update.update(round=round_no, rounds=round_no)
        return update

    debate_turn.__name__ = side
    return debate_turn
