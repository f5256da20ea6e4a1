"""DebateCV's screen: RAG-CoT's reading of the debate's evidence, sampled ``screen_k`` times.

Where the provider answers one request with several samples (``takes_samples``), the k
answers come from ONE request with ``n``; a provider sending fewer is asked for the rest one
by one, and one without ``n`` is asked k times. The answers are transcript turns of round 0
(``screen_1`` ... ``screen_k``) that the debate, if it follows, does not read.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel

from factdebate.nodes.common import Node, model_for, settings
from factdebate.nodes.context import EvidenceContext
from factdebate.nodes.debate_cv.rag_cot import rag_cot_prompt
from factdebate.nodes.debate_cv.state import DebateCVOutput, DebateCVState
from factdebate.nodes.labelled import ask_label
from factdebate.nodes.parse import parse_label
from factdebate.nodes.screening import Screened
from factdebate.nodes.state import Turn
from factdebate.prompts import debate_cv as prompts
from factdebate.prompts.labels import LABELS_4
from factdebate.tools.core.records import add_costs
from factdebate.tools.models.llm import ask_samples, takes_samples

SCREEN_PREFIX = "screen_"


class ScreenAnswer(BaseModel):
    """One sampled screen answer asked as JSON: the reasoning, then the label."""

    reasoning: str
    label: str


def _turn(number: int, docs: list[Any], text: str, label: str | None) -> Turn:
    return Turn(
        round=0,
        agent=f"{SCREEN_PREFIX}{number}",
        tool=docs[0]["source"] if docs else "none",
        evidence=docs,
        answer=text,
        label=label,
    )


def make_screen_sampler(cls: type[EvidenceContext]) -> Node:
    """Node sampling ``screen_k`` RAG-CoT answers over the prepared evidence."""

    async def screen_samples(state: dict[str, Any], runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = settings(runtime, cls)
        k = int(getattr(ctx, "screen_k"))  # noqa: B009 - a field the catalog adds
        sampling = dataclasses.replace(ctx, temperature=float(getattr(ctx, "screen_temperature")))  # noqa: B009
        model = await model_for(sampling, "debater", str(getattr(ctx, "screen_model", "")))
        claim, docs = state["claim"], list(state.get("evidence") or [])
        prompt = rag_cot_prompt(claim, docs, prompts.LABEL_INSTRUCTIONS_4, ctx.max_doc_chars)
        site = sampling.site(role="debater", agent="screen", stage="screen", round_no=0)
        turns: list[Turn] = []
        cost: dict[str, Any] = {}
        errors: list[Any] = []
        if k > 1 and takes_samples(model):
            values, reply = await ask_samples(model, prompt, ScreenAnswer, site, k)
            cost, errors = add_costs(cost, reply.cost), list(reply.errors)
            for value in values[:k]:
                label = parse_label(value.label, LABELS_4)
                readable = label if isinstance(label, str) else None
                if readable is None:
                    errors.append(site.error("parse_error", "no label read", value.label))
                text = f"{value.reasoning}\n**{readable or value.label}**"
                turns.append(_turn(len(turns) + 1, docs, text, readable))
        replies = await asyncio.gather(
            *(
                ask_label(
                    model,
                    prompt,
                    dataclasses.replace(site, agent=f"screen_{i + 1}"),
                    labels=LABELS_4,
                )
                for i in range(len(turns), k)
            )
        )
        for answered in replies:
            turns.append(_turn(len(turns) + 1, docs, str(answered.text or ""), answered.label))
            cost = add_costs(cost, answered.cost)
            errors.extend(answered.errors)
        return {"transcript": turns, "cost": cost, "errors": errors}

    return screen_samples


def screen_answers(state: dict[str, Any]) -> list[tuple[str | None, str]]:
    """The screen's sampled labels and answers, in sample order."""
    turns = [
        t for t in state.get("transcript", []) if str(t.get("agent", "")).startswith(SCREEN_PREFIX)
    ]
    return [(t.get("label"), str(t.get("answer") or "")) for t in turns]


def screen_settled(state: dict[str, Any]) -> dict[str, Any]:
    """What a settled screen adds beside the verdict: no debate round was held."""
    return {"rounds": 0}


class EscalateDebateCVOutput(DebateCVOutput, Screened, total=False):
    """DebateCV's output plus the screen's record."""


class EscalateDebateCVState(DebateCVState, Screened, total=False):
    """DebateCV's state plus the screen's record."""
