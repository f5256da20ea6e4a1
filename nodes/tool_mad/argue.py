"""Argue: a debater answers from its documents (and the opponent's last answer) with a label."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import Node, answer_or_placeholder, model_for, settings, turn_of
from factdebate.nodes.evidence_block import render_evidence
from factdebate.nodes.labelled import ask_label
from factdebate.nodes.state import Turn
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.state import ToolMADState
from factdebate.prompts import tool_mad as prompts


def make_argue_node(agent: str, opponent: str) -> Node:
    """Build the argument node of ``agent``."""

    async def argue(state: ToolMADState, runtime: Runtime[ToolMADContext]) -> dict[str, Any]:
        ctx = settings(runtime, ToolMADContext)
        claim, round_no = state["claim"], state["round"]
        draft = Turn(**state["drafts"][agent])
        shared = {
            "setting": prompts.DEBATE_SETTING,
            "tool_description": prompts.TOOL_DESCRIPTIONS[draft["tool"]],
            "claim": claim,
            "evidence": render_evidence(draft.get("evidence", []), ctx.max_doc_chars),
            "evidence_rules": prompts.EVIDENCE_RULES,
            "grounded_style": prompts.GROUNDED_STYLE,
            "label_instructions": prompts.LABEL_INSTRUCTIONS,
        }
        first, later = prompts.FIRST_ARGUMENT, prompts.NEXT_ARGUMENT
        if draft["tool"] == "none":  # a VANILLA debater: no documents to reason from
            first, later = prompts.FIRST_ARGUMENT_NO_TOOL, prompts.NEXT_ARGUMENT_NO_TOOL
            shared["label_instructions"] = prompts.NO_EVIDENCE_LABELS
        if round_no == 1:
            prompt = first.format(**shared)
        else:
            opponent_turn = turn_of(state.get("transcript", []), opponent, round_no - 1)
            prompt = later.format(
                **shared, opponent_answer=answer_or_placeholder(opponent_turn, ctx.max_doc_chars)
            )
        model = await model_for(ctx, "debater")
        reply = await ask_label(
            model,
            prompt,
            site=ctx.site(role="debater", agent=agent, stage="argue", round_no=round_no),
        )
        draft["answer"] = reply.text
        draft["label"] = reply.label
        return {"drafts": {agent: draft}, "cost": reply.cost, "errors": reply.errors}

    argue.__name__ = f"argue_{agent}"
    return argue
