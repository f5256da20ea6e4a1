"""Zero-shot chain-of-thought baseline: one model call, no evidence, one label."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.baselines.state import CoTState
from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import model_for, settings
from factdebate.nodes.context import Context
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import baselines as prompts


async def answer(state: CoTState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the model to reason step by step and end with a label."""
    ctx = settings(runtime, Context)
    claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
    prompt = prompts.COT.format(label_instructions=prompts.NO_EVIDENCE_LABELS, claim=claim)
    model = await model_for(ctx, "debater")
    reply = await ask_label(
        model, prompt, site=ctx.site(role="debater", agent="cot", stage="answer", round_no=1)
    )
    turn = Turn(
        round=1, agent="cot", tool="none", evidence=[], answer=reply.text, label=reply.label
    )
    return {
        "claim": claim,
        "verdict": reply.label,
        "justification": without_label(reply.text),
        "decided_by": decided("cot", 1, "single_answer", "One chain-of-thought answer."),
        "stop_reason": "single_answer",
        "rounds": 1,
        "transcript": [turn],
        "cost": reply.cost,
        "errors": reply.errors,
    }
