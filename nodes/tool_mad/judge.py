"""Judge: after the round limit, decide from the whole debate and the averaged scores."""

from __future__ import annotations

from statistics import mean
from typing import Any

from langgraph.runtime import Runtime

from factdebate.nodes.common import model_for, settings, turn_of
from factdebate.nodes.evidence_block import QUERY_CHARS, quote_answer, render_evidence, sanitize
from factdebate.nodes.labelled import ask_label, without_label
from factdebate.nodes.state import Turn, decided
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.gate import below
from factdebate.nodes.tool_mad.rounds import DEBATERS
from factdebate.nodes.tool_mad.state import ToolMADState
from factdebate.prompts import tool_mad as prompts


def average(turns: list[Turn], key: str) -> float | None:
    """Mean of a score over the rounds where it could be computed."""
    values = [float(v) for t in turns if isinstance(v := t.get(key), int | float)]
    return mean(values) if values else None


def average_scores(transcript: list[Turn]) -> dict[str, dict[str, float | None]]:
    """Each debater's faithfulness and answer relevance, averaged over its rounds."""
    return {
        agent: {
            key: average([t for t in transcript if t.get("agent") == agent], key)
            for key in ("faithfulness", "answer_relevance")
        }
        for agent in DEBATERS
    }


def render_scores(transcript: list[Turn]) -> str:
    """Each debater's faithfulness and answer relevance, as judge input.

    The average over the rounds comes first, then the last round's own scores (the ones the
    judge prompt's opening quotes), each named as such.
    """
    lines = []
    for agent in DEBATERS:
        turns = sorted(
            (t for t in transcript if t.get("agent") == agent), key=lambda t: t.get("round", 0)
        )
        tool = turns[0].get("tool", "?") if turns else "?"
        parts: dict[str, list[str]] = {"average": [], "last": []}
        for key, name in (
            ("faithfulness", "faithfulness"),
            ("answer_relevance", "answer relevance"),
        ):
            for which, value in (
                ("average", average(turns, key)),
                ("last", average(turns[-1:], key)),
            ):
                shown = f"{value:.2f}" if value is not None else "not available"
                parts[which].append(f"{name} {shown}")
        last_round = turns[-1].get("round", "?") if turns else "?"
        lines.append(
            f"- {agent} ({tool}): average over {len(turns)} rounds: "
            + ", ".join(parts["average"])
            + f"; last round ({last_round}): "
            + ", ".join(parts["last"])
        )
    return "\n".join(lines)


def render_history(transcript: list[Turn], max_doc_chars: int) -> str:
    """The debate, round by round: query, documents and answer of each debater.

    A document retrieved again later in the debate is shown once; later blocks point back.
    """
    blocks: list[str] = []
    shown: dict[tuple[str, str], str] = {}
    for turn in sorted(transcript, key=lambda t: (t.get("round", 0), t.get("agent", ""))):
        where = f"round {turn.get('round')}, {turn.get('agent')}"
        evidence = render_evidence(turn.get("evidence", []), max_doc_chars, shown, where)
        blocks.append(
            f"Round {turn.get('round')}, {turn.get('agent')} ({turn.get('tool')}), "
            f"query: {sanitize(turn.get('query') or '(none)', QUERY_CHARS)}\n"
            f"{evidence}\n"
            f"Answer: {quote_answer(turn.get('answer'), 4 * max_doc_chars)}"
        )
    return "\n\n".join(blocks)


def score_problems(turn: Turn, ctx: ToolMADContext) -> list[str]:
    """Why one turn's scores did not pass the stability thresholds, in words."""
    agent, problems, bounds = turn.get("agent", "?"), [], ctx.thresholds()
    checks = [("answer relevance", turn.get("answer_relevance"), bounds.relevance)]
    if turn.get("tool") != "none":
        checks.insert(0, ("faithfulness", turn.get("faithfulness"), bounds.faithfulness))
    for name, value, threshold in checks:
        if value is None:
            problems.append(f"{agent}'s {name} could not be computed")
        elif value < threshold:
            shown, bound = below(value, threshold)
            problems.append(f"{agent}'s {name} {shown} is below {bound}")
    return problems


def last_round(
    transcript: list[Turn], round_no: int, ctx: ToolMADContext
) -> tuple[str | None, str]:
    """The label both debaters agreed on in ``round_no`` (None: none), and why in words.

    The words say why the agreement did not count, or what each debater said.
    """
    turns = [t for a in DEBATERS if (t := turn_of(transcript, a, round_no))]
    labels = [t.get("label") for t in turns]
    if len(turns) == len(DEBATERS) and len(set(labels)) == 1 and labels[0] is not None:
        problems = [p for t in turns for p in score_problems(t, ctx)]
        return labels[0], "; ".join(problems) or "the stability check did not pass"
    said = ", ".join(f"{t.get('agent')}: {t.get('label') or 'no readable label'}" for t in turns)
    return None, said or "no answers"


def situation(transcript: list[Turn], round_no: int, ctx: ToolMADContext) -> str:
    """Why the judge is deciding: the debaters disagreed, or agreed without passing scores."""
    agreed, words = last_round(transcript, round_no, ctx)
    if agreed is not None:
        return prompts.SITUATION_AGREED_UNSTABLE.format(label=agreed, problems=words)
    return prompts.SITUATION_DISAGREED.format(labels=words)


def judge_detail(transcript: list[Turn], round_no: int, ctx: ToolMADContext) -> str:
    """Why the judge decided, for ``decided_by``: no consensus by the round limit, and how."""
    agreed, words = last_round(transcript, round_no, ctx)
    head = f"No consensus after {round_no} round(s), the round limit: in round {round_no}"
    if agreed is not None:
        return f"{head} both debaters concluded {agreed}, but {words}."
    return f"{head} the debaters disagreed ({words})."


async def judge(state: ToolMADState, runtime: Runtime[ToolMADContext]) -> dict[str, Any]:
    """Ask the judge for the final label; an unreadable answer leaves the verdict empty."""
    ctx = settings(runtime, ToolMADContext)
    transcript = state.get("transcript", [])
    prompt = prompts.JUDGE.format(
        situation=situation(transcript, state["round"], ctx),
        claim=state["claim"],
        history=render_history(transcript, ctx.max_doc_chars),
        scores=render_scores(transcript) if ctx.stability_score else "(scores not computed)",
        relevance_note=prompts.RELEVANCE_NOTES[ctx.nei_relevance] if ctx.stability_score else "",
        evidence_rules=prompts.EVIDENCE_RULES,
        label_instructions=prompts.LABEL_INSTRUCTIONS,
    )
    model = await model_for(ctx, "judge")
    reply = await ask_label(
        model,
        prompt,
        site=ctx.site(role="judge", agent="judge", stage="judge", round_no=state["round"]),
    )
    return {
        "verdict": reply.label,
        "justification": without_label(reply.text),
        "decided_by": decided(
            "judge",
            state["round"],
            "round_limit",
            judge_detail(transcript, state["round"], ctx),
            scores=average_scores(transcript) if ctx.stability_score else {},
        ),
        "stop_reason": "round_limit",
        "cost": reply.cost,
        "errors": reply.errors,
    }
