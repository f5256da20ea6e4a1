"""MAD baseline (Liang et al.): affirmative and negative sides without retrieval, a judge."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from factdebate.nodes.baselines.context import MADContext
from factdebate.nodes.baselines.state import MADState
from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import budget_stop, model_for, over_budget, route, settings
from factdebate.nodes.evidence_block import quote_answer
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import baselines as prompts
from factdebate.tools.core.records import ErrorRecord, add_costs
from factdebate.tools.models.llm import ask

SIDES = ("affirmative", "negative")


def render_debate(transcript: list[Turn], max_chars: int) -> str:
    """Render the arguments so far, in speaking order (sanitised, capped)."""
    if not transcript:
        return "(no arguments yet)"
    return "\n\n".join(
        f"Round {t.get('round')}, {t.get('agent')}: {quote_answer(t.get('answer'), max_chars)}"
        for t in transcript
    )


def make_side_node(side: str) -> Any:
    """Build the argument node of one side."""
    template = prompts.MAD_AFFIRMATIVE if side == "affirmative" else prompts.MAD_NEGATIVE

    async def argue(state: MADState, runtime: Runtime[MADContext]) -> dict[str, Any]:
        ctx = settings(runtime, MADContext)
        update: dict[str, Any] = {}
        if side == "affirmative":
            round_no = state.get("round", 0) + 1
            update.update(round=round_no, rounds=round_no)
            if round_no == 1:
                update["claim"] = clean_claim(state.get("claim"), ctx.max_claim_chars)
        else:
            round_no = state["round"]
        claim = update.get("claim", state.get("claim", ""))
        debate = render_debate(state.get("transcript", []), ctx.max_doc_chars)
        prompt = template.format(claim=claim, debate_so_far=f"Debate so far:\n{debate}")
        model = await model_for(ctx, "debater")
        reply = await ask(
            model,
            prompt,
            site=ctx.site(role="debater", agent=side, stage="argue", round_no=round_no),
        )
        turn = Turn(
            round=round_no,
            agent=side,
            tool="none",
            evidence=[],
            answer=reply.text or "",
            label=None,
        )
        return {**update, "transcript": [turn], "cost": reply.cost, "errors": reply.errors}

    argue.__name__ = side
    return argue


async def judge(state: MADState, runtime: Runtime[MADContext]) -> dict[str, Any]:
    """Decide the label, or (before the limit, when allowed) ask for another round."""
    ctx = settings(runtime, MADContext)
    round_no = state["round"]
    final = round_no >= ctx.max_rounds
    if not final and not ctx.judge_each_round:
        return out_of_budget(state, ctx, {}) or {"decision": "continue"}
    prompt = prompts.MAD_JUDGE.format(
        continue_rule=prompts.MAD_FINAL_RULE if final else prompts.MAD_CONTINUE_RULE,
        label_instructions=prompts.NO_EVIDENCE_LABELS,
        claim=state["claim"],
        debate=render_debate(state.get("transcript", []), ctx.max_doc_chars),
    )
    model = await model_for(ctx, "judge")
    reply = await ask_label(
        model, prompt, site=ctx.site(role="judge", agent="judge", stage="judge", round_no=round_no)
    )
    text = reply.text
    lines = [line.strip(" *`.") for line in text.strip().splitlines() if line.strip()]
    wants_more = bool(lines) and lines[-1].upper() == "CONTINUE"
    if not final and wants_more:
        # CONTINUE is a valid answer before the limit, not a parse failure.
        kept = [e for e in reply.errors if e.get("kind") != "parse_error"]
        update = {"decision": "continue", "cost": reply.cost, "errors": kept}
        return out_of_budget(state, ctx, update) or update
    errors: list[ErrorRecord] = list(reply.errors)
    return {
        "decision": "done",
        "verdict": reply.label,
        "justification": without_label(text),
        "decided_by": decided(
            "judge",
            round_no,
            "round_limit" if final else "moderator",
            f"The judge gave its verdict at the round limit ({round_no} rounds)."
            if final
            else f"The judge stopped the debate after round {round_no} with a verdict.",
        ),
        "stop_reason": "round_limit" if final else "moderator",
        "cost": reply.cost,
        "errors": errors,
    }


def out_of_budget(
    state: MADState, ctx: MADContext, update: dict[str, Any]
) -> dict[str, Any] | None:
    """Instead of another round, stop without a verdict when the claim's budget is spent."""
    spent = over_budget(add_costs(state.get("cost", {}), update.get("cost", {})), ctx)
    if not spent:
        return None
    stop = budget_stop(spent, agent="judge", round_no=state["round"])
    return {
        **update,
        **stop,
        "decision": "done",
        "errors": [*update.get("errors", []), *stop["errors"]],
    }


def route_after_judge(state: MADState) -> Literal["affirmative", "__end__"]:
    """Another round or the end."""
    return route(state, {"continue": "affirmative", "done": "__end__"})
