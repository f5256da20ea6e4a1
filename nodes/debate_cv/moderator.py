"""DebateCV moderator: structured round assessments, bounded retry, final verdict at the limit."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, field_validator, model_validator

from factdebate.nodes.common import budget_stop, model_for, over_budget, route, settings
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.nodes.debate_cv.debate_turn import render_dialogue
from factdebate.nodes.debate_cv.state import DebateCVState, ModeratorNote
from factdebate.nodes.evidence_block import render_evidence, sanitize
from factdebate.nodes.labelled import without_label
from factdebate.nodes.state import Turn, decided
from factdebate.prompts import debate_cv as prompts
from factdebate.prompts.labels import LABEL_SPELLINGS, Label, spelling_key
from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs
from factdebate.tools.models.llm import CallSite, ask_structured

Decision = Literal["continue", "stop", "final", "failed", "budget_exhausted"]
SchemaT = TypeVar("SchemaT", bound=BaseModel)


def _canonical_label(value: Any) -> Any:
    """Map exact spellings of the four labels (e.g. the paper's 'Supported') onto ours.

    Anything else is returned unchanged, so that validation rejects it.
    """
    if not isinstance(value, str):
        return value
    key = spelling_key(value)
    if key in ("", "NONE", "NULL"):
        return None
    return LABEL_SPELLINGS.get(key, key)


class ModeratorDecision(BaseModel):
    """What the moderator must return after each round."""

    new_insight: str = Field(description="What this round added compared with earlier rounds.")
    evidence_gaps: str = Field(description="Evidence or arguments still missing on either side.")
    proceed: bool = Field(description="True if another round is needed, false to stop now.")
    reason: str = Field(description="Why the debate continues or stops.")
    verdict: Label | None = Field(
        default=None, description="Required when proceed is false; null when proceed is true."
    )
    justification: str = Field(default="", description="Why the evidence leads to the verdict.")

    key_aliases: ClassVar[dict[str, str]] = {  # the paper's own key names (App. B)
        "primary_insight": "new_insight",
        "new_insights": "new_insight",
        "justification_for_proceeding": "reason",
        "proceeding_necessity": "proceed",
        "justification_for_verdict": "justification",
    }
    _label = field_validator("verdict", mode="before")(_canonical_label)

    @model_validator(mode="after")
    def _verdict_when_stopping(self) -> ModeratorDecision:
        if not self.proceed and self.verdict is None:
            raise ValueError("a verdict is required when proceed is false")
        return self


class FinalVerdict(BaseModel):
    """What the moderator must return at the round limit."""

    justification: str = Field(description="Step-by-step reasons for the verdict.")
    verdict: Label = Field(description="SUPPORTS, REFUTES, NOT ENOUGH INFO or CONFLICTING.")

    key_aliases: ClassVar[dict[str, str]] = {"justification_for_verdict": "justification"}
    _label = field_validator("verdict", mode="before")(_canonical_label)


class CorrectedJustification(BaseModel):
    """What the corrector must return."""

    justification: str = Field(
        description="Reasons leading from the debate to the correct verdict."
    )


async def ask_with_retry(
    model: BaseChatModel,
    prompt: str,
    schema: type[SchemaT],
    site: CallSite,
    *,
    attempts: int,
) -> tuple[SchemaT | None, dict[str, RoleCost], list[ErrorRecord], bool]:
    """Ask for ``schema`` up to ``attempts`` times; every failure is kept as an error record.

    A retry repeats the prompt with a note naming what was wrong. Returns the parsed value
    (None if every attempt failed), the summed cost, the errors, and whether any attempt
    produced text (False = only model errors or timeouts).
    """
    cost: dict[str, RoleCost] = {}
    errors: list[ErrorRecord] = []
    got_text = False
    current = prompt
    for _ in range(max(1, attempts)):
        parsed, reply = await ask_structured(model, current, schema, site)
        cost = add_costs(cost, reply.cost)
        errors.extend(reply.errors)
        got_text = got_text or reply.text is not None
        if parsed is not None:
            return parsed, cost, errors, got_text
        problem = reply.errors[-1]["message"] if reply.errors else "no answer"
        current = prompt + prompts.RETRY_NOTE.format(problem=sanitize(problem, 300))
    return None, cost, errors, got_text


def render_notes(notes: list[ModeratorNote], max_chars: int) -> str:
    """Render the moderator's earlier round notes, oldest first (model text: sanitised)."""
    if not notes:
        return "(none yet)"
    return "\n".join(
        sanitize(
            f"- Round {n.get('round')}: insight: {n.get('new_insight', '')} | gaps: "
            f"{n.get('evidence_gaps', '')} | {n.get('reason', '')}",
            max_chars,
        )
        for n in notes
    )


def moderator_setup(state: DebateCVState, ctx: DebateCVContext) -> str:
    """Write the scene the moderator sees every time: rules, claim, documents, verdict criteria."""
    return prompts.MODERATOR_SETUP.format(
        evidence_rules=prompts.EVIDENCE_RULES,
        claim=state["claim"],
        evidence=render_evidence(state.get("evidence", []), ctx.max_doc_chars),
        criteria=prompts.VERDICT_CRITERIA,
    )


def round_prompt(state: DebateCVState, ctx: DebateCVContext) -> str:
    """The end-of-round question: earlier notes, the dialogue so far, proceed or stop."""
    return prompts.MODERATOR_ROUND.format(
        setup=moderator_setup(state, ctx),
        notes=render_notes(state.get("moderator_notes", []), ctx.max_doc_chars),
        round_no=state["round"],
        dialogue=render_dialogue(state.get("transcript", []), ctx.max_doc_chars),
    )


def final_prompt(state: DebateCVState, ctx: DebateCVContext) -> str:
    """The round-limit question: the whole debate and the round notes, one verdict."""
    return prompts.FINAL_VERDICT.format(
        setup=moderator_setup(state, ctx),
        max_rounds=ctx.max_rounds,
        summary=render_notes(state.get("moderator_notes", []), ctx.max_doc_chars),
        dialogue=render_dialogue(state.get("transcript", []), ctx.max_doc_chars),
    )


def failure(round_no: int, stage: str, attempts: int, got_text: bool) -> dict[str, Any]:
    """Update for a moderator that gave no valid output: no verdict, an explicit stop reason."""
    reason = "moderator_unparseable" if got_text else "moderator_error"
    error = ErrorRecord(
        round=round_no,
        agent="moderator",
        stage=stage,
        kind=reason,
        message=f"no valid moderator output after {attempts} attempt(s); no verdict was given",
    )
    return {
        "decision": "failed",
        "verdict": None,
        "justification": "",
        "decided_by": decided("moderator", round_no, reason, error["message"]),
        "stop_reason": reason,
        "errors": [error],
    }


def moderator_turn(round_no: int, payload: BaseModel, label: str | None) -> Turn:
    """Record the moderator's output as a transcript turn."""
    return Turn(
        round=round_no,
        agent="moderator",
        evidence=[],
        label=label,
        answer=json.dumps(payload.model_dump(), ensure_ascii=False),
    )


async def _ask_moderator(
    ctx: DebateCVContext, prompt: str, schema: type[SchemaT], stage: str, round_no: int
) -> tuple[SchemaT | None, dict[str, RoleCost], list[ErrorRecord], dict[str, Any] | None]:
    """Ask the moderator for ``schema``; on failure also return the run-ending update."""
    attempts = ctx.moderator_retries + 1
    model = await model_for(ctx, "judge")
    parsed, cost, errors, got_text = await ask_with_retry(
        model,
        prompt,
        schema,
        attempts=attempts,
        site=ctx.site(role="moderator", agent="moderator", stage=stage, round_no=round_no),
    )
    if parsed is not None:
        return parsed, cost, errors, None
    update = failure(round_no, stage, attempts, got_text)
    update.update(cost=cost, errors=errors + update["errors"])
    return None, cost, errors, update


async def moderate(state: DebateCVState, runtime: Runtime[DebateCVContext]) -> dict[str, Any]:
    """Assess the round just finished: continue, stop with a verdict, or go to the final step."""
    ctx = settings(runtime, DebateCVContext)
    round_no = state["round"]
    parsed, cost, errors, failed = await _ask_moderator(
        ctx, round_prompt(state, ctx), ModeratorDecision, "moderate", round_no
    )
    if parsed is None:
        return failed or {}
    note = ModeratorNote(round=round_no, **parsed.model_dump())  # type: ignore[typeddict-item]
    update: dict[str, Any] = {"moderator_notes": [note], "cost": cost, "errors": errors}
    if not parsed.proceed:
        decision: Decision = "stop"
        update.update(
            verdict=parsed.verdict,
            justification=without_label(parsed.justification),
            decided_by=decided(
                "moderator",
                round_no,
                "moderator",
                f"The moderator stopped the debate after round {round_no}: "
                f"{' '.join(parsed.reason.split()) or 'no reason given'}",
            ),
            stop_reason="moderator",
        )
    else:
        decision = "final" if round_no >= ctx.max_rounds else "continue"
    spent = over_budget(add_costs(state.get("cost", {}), cost), ctx)
    if decision in ("continue", "final") and spent:
        # No budget for another round (or the final step): stop without a verdict, keep notes.
        decision = "budget_exhausted"
        stop = budget_stop(spent, agent="moderator", round_no=round_no)
        update.update(stop, errors=[*errors, *stop["errors"]])
    update["decision"] = decision
    update["transcript"] = [
        moderator_turn(round_no, parsed, parsed.verdict if decision == "stop" else None)
    ]
    return update


async def final_verdict(state: DebateCVState, runtime: Runtime[DebateCVContext]) -> dict[str, Any]:
    """At the round limit the moderator decides from a summary of the whole debate."""
    ctx = settings(runtime, DebateCVContext)
    round_no = state["round"]
    parsed, cost, errors, failed = await _ask_moderator(
        ctx, final_prompt(state, ctx), FinalVerdict, "final_verdict", round_no
    )
    if parsed is None:
        return failed or {}
    note = ModeratorNote(
        round=round_no,
        new_insight="",
        evidence_gaps="",
        proceed=False,
        reason="round limit reached",
        verdict=parsed.verdict,
        justification=parsed.justification,
    )
    return {
        "verdict": parsed.verdict,
        "justification": without_label(parsed.justification),
        "decided_by": decided(
            "moderator",
            round_no,
            "round_limit",
            f"The debate reached the round limit ({ctx.max_rounds}); the moderator gave the "
            "final verdict from a summary of every round.",
        ),
        "stop_reason": "round_limit",
        "moderator_notes": [note],
        "transcript": [moderator_turn(round_no, parsed, parsed.verdict)],
        "cost": cost,
        "errors": errors,
    }


def route_after_moderator(
    state: DebateCVState,
) -> Literal["affirmative", "final_verdict", "__end__"]:
    """Conditional edge after the moderator: next round, final verdict, or the end."""
    return route(
        state,
        {
            "continue": "affirmative",
            "final": "final_verdict",
            "stop": "__end__",
            "failed": "__end__",
            "budget_exhausted": "__end__",
        },
    )
