"""Score: RAGAS faithfulness and answer relevance of a debater's answer; closes its turn."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import Node, model_for, settings
from factdebate.nodes.evidence_block import evidence_blocks, sanitize
from factdebate.nodes.state import Turn
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.state import ToolMADState
from factdebate.prompts import tool_mad as prompts
from factdebate.tools.scoring.ragas_metrics import ragas_scores
from factdebate.tools.scoring.relevance_encoder import relevance_embeddings, relevance_label


def nei_by_cosine(turn: Turn, ctx: ToolMADContext) -> bool:
    """Whether this turn's relevance ignores RAGAS's noncommittal rule (``nei_relevance``)."""
    return ctx.nei_relevance == "cosine" and turn.get("label") == "NOT ENOUGH INFO"


def make_score_node(agent: str) -> Node:
    """Build the scoring node of ``agent`` (a no-op scorer when the stability score is off)."""

    async def score(state: ToolMADState, runtime: Runtime[ToolMADContext]) -> dict[str, Any]:
        ctx = settings(runtime, ToolMADContext)
        turn = Turn(**state["drafts"][agent])
        turn.setdefault("faithfulness", None)
        turn.setdefault("answer_relevance", None)
        update: dict[str, Any] = {}
        if ctx.stability_score and turn.get("answer"):
            model = await model_for(ctx, "scorer")
            embeddings = await asyncio.to_thread(relevance_embeddings, ctx.relevance_encoder)
            encoder = await asyncio.to_thread(relevance_label, ctx.relevance_encoder)
            # The blocks the debater read, with the numbers and ids it cites ("[2]"), then how
            # statements of silence are judged.
            blocks = evidence_blocks(turn.get("evidence", []), ctx.max_doc_chars)
            contexts = (
                None if turn["tool"] == "none" else blocks + [prompts.SILENCE_NOTE] * bool(blocks)
            )
            result = await ragas_scores(
                claim=state["claim"],
                answer=sanitize(str(turn["answer"]), 4 * ctx.max_doc_chars),
                contexts=contexts,
                model=model,
                embeddings=embeddings,
                site=ctx.site(role="scorer", agent=agent, stage="score", round_no=state["round"]),
                strictness=ctx.relevance_strictness,
                question_temperature=ctx.relevance_temperature,
                unchecked=prompts.UNCHECKED_SENTENCES,
                noncommittal_zero=not nei_by_cosine(turn, ctx),
            )
            turn["faithfulness"] = result.faithfulness
            turn["answer_relevance"] = result.answer_relevance
            turn["relevance_encoder"] = encoder
            update = {"cost": result.cost, "errors": result.errors}
        return {**update, "transcript": [turn], "drafts": {agent: None}}

    score.__name__ = f"score_{agent}"
    return score
