"""Zero-shot chain-of-thought baseline: one model call, no evidence, one label."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.context import Context
from graphs.state import ClaimInput, DebateOutput, Turn
from nodes.claims import clean_claim
from nodes.common import model_for, settings
from nodes.labelled import ask_label
from prompts import baselines as prompts


class CoTState(DebateOutput, total=False):
    """The claim plus the result contract."""

    claim: str


async def answer(state: CoTState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the model to reason step by step and end with a label."""
    ctx = settings(runtime, Context)
    claim = clean_claim(state.get("claim"), ctx.max_claim_chars)
    prompt = prompts.COT.format(label_instructions=prompts.NO_EVIDENCE_LABELS, claim=claim)
    model = await model_for(ctx, "debater")
    reply = await ask_label(model, prompt, role="debater", agent="cot", stage="answer",
                            round_no=1, timeout=ctx.call_timeout_s, retries=ctx.model_retries)
    turn = Turn(round=1, agent="cot", tool="none", evidence=[], answer=reply.text,
                label=reply.label)
    return {
        "claim": claim,
        "verdict": reply.label,
        "justification": reply.text,
        "stop_reason": "single_answer",
        "rounds": 1,
        "transcript": [turn],
        "cost": reply.cost,
        "errors": reply.errors,
    }


builder = StateGraph(CoTState, context_schema=Context, input_schema=ClaimInput,
                     output_schema=DebateOutput)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)

graph = builder.compile(name="cot")
