"""Jury nodes: each juror's turn (plan, search, speak), round bookkeeping, majority judge."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from factdebate.nodes.claims import clean_claim
from factdebate.nodes.common import budget_error, model_for, over_budget, route, settings
from factdebate.nodes.evidence_block import QUERY_CHARS, quote_answer, render_evidence, sanitize
from factdebate.nodes.labelled import ask_parsed
from factdebate.nodes.mad_fact.context import MADFactContext, Strategy
from factdebate.nodes.mad_fact.state import ClaimResult, JuryState, JuryTurn, KnowledgeEntry
from factdebate.nodes.parse import ParseFailure, Truth, parse_confidence, parse_query, parse_truth
from factdebate.nodes.retrieval import retrieve_or_record
from factdebate.nodes.state import DecidedBy, decided
from factdebate.prompts import mad_fact as prompts
from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs
from factdebate.tools.models.llm import CallSite, ask
from factdebate.tools.scoring.factuality import normalize_claim


def round_instructions(round_no: int, searched: bool) -> str:
    """What a juror is asked to do this round (never to cite searches that did not run)."""
    if round_no == 1:
        return prompts.FIRST_ROUND
    return prompts.LATER_ROUND if searched else prompts.LATER_ROUND_NO_SEARCHES


def strategy_for(rule: int, round_no: int) -> Strategy:
    """How every juror answers in ``round_no`` under debate rule 1, 2 or 3."""
    if round_no == 1:
        return "search" if rule == 2 else "conditional"
    return "search" if rule == 3 else "direct"


def render_knowledge(knowledge: list[KnowledgeEntry], max_doc_chars: int) -> str:
    """Every search so far with its (model-written, sanitised) query and its documents, fenced."""
    if not knowledge:
        return "(no searches yet)"
    return "\n\n".join(
        f"Search {i} by {entry['agent']}: [{sanitize(entry['query'], QUERY_CHARS)}]\n"
        f"{render_evidence(entry['evidence'], max_doc_chars)}"
        for i, entry in enumerate(knowledge, 1)
    )


def cap_opinion(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` at a sentence end (else a word end), marked.

    The marker says how many characters were left out, so the next juror sees that the
    opinion goes on; nothing is ever cut mid-word (one over-long word is the exception).
    """
    if len(text) <= max_chars:
        return text
    head = text[: max_chars + 1]
    sentence = max(head.rfind(f"{end} ") for end in ".!?")
    if sentence >= max_chars // 2:
        kept = head[: sentence + 1]
    else:
        word = head.rfind(" ")
        kept = head[:word] if word > 0 else head[:max_chars]
    kept = kept.rstrip()
    return f"{kept} [... {len(text) - len(kept)} more characters cut]"


def render_pool(turns: list[JuryTurn], max_chars: int) -> str:
    """Render the shared message pool: what each juror said, in order (sanitised, capped)."""
    if not turns:
        return "(nobody has spoken yet)"
    lines = []
    for turn in turns:
        text = " ".join(quote_answer(turn.get("answer"), 4 * max_chars).split())
        text = cap_opinion(text, max_chars)
        title = prompts.ROLES.get(str(turn.get("agent")), (str(turn.get("agent")), ""))[0]
        lines.append(f"- Round {turn.get('round')}, {title}: {text}")
    return "\n".join(lines)


def used_queries(knowledge: list[KnowledgeEntry]) -> list[str]:
    """List the queries run so far, in order."""
    return [entry["query"] for entry in knowledge]


def render_used(queries: list[str]) -> str:
    """Bullet list of queries already used."""
    return (
        "\n".join(f"- [{sanitize(q, QUERY_CHARS)}]" for q in queries) if queries else "(none yet)"
    )


def is_repeat(query: str, earlier: list[str]) -> bool:
    """Whether ``query`` repeats an earlier one (case, spacing and punctuation ignored)."""
    key = normalize_claim(query)
    return any(normalize_claim(q) == key for q in earlier)


async def new_query(
    model: BaseChatModel, prompt_for: Any, earlier: list[str], site: CallSite, *, attempts: int
) -> tuple[str | None, dict[str, RoleCost], list[ErrorRecord]]:
    """Ask for a query that repeats none of ``earlier``; repeats are recorded, never run.

    ``prompt_for(list_of_rejected)`` builds the prompt; after ``attempts`` tries without a
    new, readable query the caller goes on without searching.
    """
    cost: dict[str, RoleCost] = {}
    errors: list[ErrorRecord] = []
    rejected: list[str] = []
    for _ in range(attempts):
        reply = await ask(model, prompt_for(earlier + rejected), site)
        cost = add_costs(cost, reply.cost)
        errors.extend(reply.errors)
        if reply.text is None:
            return None, cost, errors
        query = parse_query(reply.text)
        if isinstance(query, ParseFailure):
            errors.append(site.error("parse_error", query.reason, query.raw))
            continue
        if is_repeat(query, earlier + rejected):
            errors.append(
                site.error("repeated_query", f"query repeats an earlier one: [{query}]", reply.text)
            )
            rejected.append(query)
            continue
        return query, cost, errors
    return None, cost, errors


def _header(state: JuryState, ctx: MADFactContext, role: str) -> str:
    title, description = prompts.ROLES.get(role, prompts.NEUTRAL_PROFILE)
    question = state.get("question") or ""
    return prompts.JUROR_HEADER.format(
        role_title=title,
        role_description=description,
        search_nudge=prompts.SEARCH_NUDGE,
        question_line=f"from an answer to: {question}" if question else "to check",
        claim=state["claim"],
        knowledge=render_knowledge(state.get("knowledge", []), ctx.max_doc_chars),
        evidence_rules=prompts.EVIDENCE_RULES,
        pool=render_pool(state.get("transcript", []), min(1500, ctx.max_doc_chars)),
    )


def _speaker(state: JuryState, ctx: MADFactContext) -> tuple[str, str]:
    """The juror whose turn it is: its name in the transcript and its role."""
    index = state.get("speaker", 0)
    return ctx.juror_names()[index], ctx.jury_roles()[index]


async def _juror_model(state: JuryState, ctx: MADFactContext) -> BaseChatModel:
    """The speaking juror's model (its own in a mixed-model jury)."""
    return await model_for(ctx, "debater", ctx.juror_model(state.get("speaker", 0)))


async def open_claim(state: JuryState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Validate the claim and seat the first juror of round 1."""
    ctx = settings(runtime, MADFactContext)
    return {
        "claim": clean_claim(state.get("claim"), ctx.max_claim_chars),
        "claim_id": state.get("claim_id", 0),
        "round": 1,
        "rounds": 1,
        "speaker": 0,
    }


async def plan_turn(state: JuryState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Pick the juror's strategy; a conditional turn asks for its confidence first."""
    ctx = settings(runtime, MADFactContext)
    round_no, (name, role) = state["round"], _speaker(state, ctx)
    strategy = strategy_for(ctx.debate_rule, round_no) if ctx.search else "direct"
    update: dict[str, Any] = {
        "strategy": strategy,
        "confidence": None,
        "turn_query": "",
        "turn_evidence": [],
    }
    if strategy != "conditional":
        return {**update, "decision": "search" if strategy == "search" else "speak"}
    model = await _juror_model(state, ctx)
    prompt = prompts.CONFIDENCE.format(header=_header(state, ctx, role))
    reply = await ask_parsed(
        model,
        prompt,
        parse_confidence,
        on_failure="searching to be safe",
        site=ctx.site(role="debater", agent=name, stage="confidence", round_no=round_no),
    )
    confidence, errors = reply.value, reply.errors
    # Unknown confidence counts as low: the juror searches rather than guesses.
    low = confidence is None or confidence < ctx.confidence_threshold
    return {
        **update,
        "confidence": confidence,
        "decision": "search" if low else "speak",
        "cost": reply.cost,
        "errors": errors,
    }


async def search(state: JuryState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Write a query no juror used before, run it, add the results to the shared knowledge."""
    ctx = settings(runtime, MADFactContext)
    round_no, (name, role) = state["round"], _speaker(state, ctx)
    header = _header(state, ctx, role)
    earlier = used_queries(state.get("knowledge", []))

    def prompt_for(used: list[str]) -> str:
        return prompts.QUERY.format(header=header, used_queries=render_used(used))

    model = await _juror_model(state, ctx)
    query, cost, errors = await new_query(
        model,
        prompt_for,
        earlier,
        ctx.site(role="debater", agent=name, stage="query", round_no=round_no),
        attempts=ctx.query_attempts,
    )
    if query is None:
        return {"cost": cost, "errors": errors}
    docs, search_errors = await retrieve_or_record(
        ctx, "search", query, agent=name, round_no=round_no, stage="search", claim=state["claim"]
    )
    entry = KnowledgeEntry(query=query, agent=name, round=round_no, evidence=docs)
    return {
        "turn_query": query,
        "turn_evidence": docs,
        "knowledge": [entry],
        "cost": cost,
        "errors": errors + search_errors,
    }


async def speak(state: JuryState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Let the juror give its TRUE/FALSE opinion; it joins the shared message pool."""
    ctx = settings(runtime, MADFactContext)
    round_no, (name, role) = state["round"], _speaker(state, ctx)
    own = state.get("turn_evidence") or []
    prompt = prompts.OPINION.format(
        header=_header(state, ctx, role),
        round_no=round_no,
        turn_evidence=render_evidence(own, ctx.max_doc_chars)
        if state.get("turn_query")
        else "(you did not search this turn)",
        round_instructions=round_instructions(round_no, bool(state.get("knowledge"))),
    )
    model = await _juror_model(state, ctx)
    reply = await ask_parsed(
        model,
        prompt,
        parse_truth,
        site=ctx.site(role="debater", agent=name, stage="opinion", round_no=round_no),
    )
    label, errors = reply.value, reply.errors
    turn = JuryTurn(
        round=round_no,
        agent=name,
        claim_id=state.get("claim_id", 0),
        strategy=state.get("strategy", ""),
        confidence=state.get("confidence"),
        tool="search" if state.get("turn_query") else "none",
        query=state.get("turn_query", ""),
        evidence=list(own),
        answer=reply.text,
        label=label,
    )
    return {"transcript": [turn], "cost": reply.cost, "errors": errors}


def round_labels(turns: list[JuryTurn], round_no: int) -> list[str | None]:
    """Labels of ``round_no`` in speaking order (None = unreadable)."""
    return [t.get("label") for t in turns if t.get("round") == round_no]


async def advance(state: JuryState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Seat the next juror, open the next round, or close the debate."""
    ctx = settings(runtime, MADFactContext)
    round_no, speaker = state["round"], state.get("speaker", 0)
    if speaker + 1 < len(ctx.jury_roles()):
        return {"speaker": speaker + 1, "decision": "next"}
    labels = round_labels(state.get("transcript", []), round_no)
    agreed = None not in labels and len(set(labels)) == 1
    if ctx.debate_rule == 3 and round_no == 1 and agreed:
        return {"decision": "judge", "stop_reason": "agreement"}
    if round_no >= ctx.round_limit():
        return {"decision": "judge", "stop_reason": "round_limit"}
    # The budget bounds the whole answer: what was spent before this jury counts too.
    spent = over_budget(add_costs(state.get("spent_before", {}), state.get("cost", {})), ctx)
    if spent:  # the majority judge decides from the rounds already held
        return {
            "decision": "judge",
            "stop_reason": "budget_exhausted",
            "errors": [budget_error(spent, agent="jury", round_no=round_no)],
        }
    return {"round": round_no + 1, "rounds": round_no + 1, "speaker": 0, "decision": "next"}


def majority(labels: list[str | None]) -> tuple[Truth | None, dict[str, int], bool]:
    """Majority of readable labels; a tie goes to the last juror with a readable label."""
    counts = Counter(label for label in labels if label in ("TRUE", "FALSE"))
    votes = {
        "TRUE": counts["TRUE"],
        "FALSE": counts["FALSE"],
        "unparsed": sum(1 for label in labels if label not in ("TRUE", "FALSE")),
    }
    if not counts:
        return None, votes, False
    if counts["TRUE"] != counts["FALSE"]:
        return ("TRUE" if counts["TRUE"] > counts["FALSE"] else "FALSE"), votes, False
    last = next(label for label in reversed(labels) if label in ("TRUE", "FALSE"))
    return ("TRUE" if last == "TRUE" else "FALSE"), votes, True


async def judge(state: JuryState, runtime: Runtime[MADFactContext]) -> dict[str, Any]:
    """Decide the claim by majority of the last round's opinions."""
    round_no = state["round"]
    labels = round_labels(state.get("transcript", []), round_no)
    verdict, votes, tie = majority(labels)
    errors: list[ErrorRecord] = []
    if verdict is None:
        errors.append(
            ErrorRecord(
                round=round_no,
                agent="judge",
                stage="judge",
                kind="no_verdict",
                message="no juror gave a readable opinion in the last round",
            )
        )
    result = ClaimResult(
        claim_id=state.get("claim_id", 0),
        claim=state["claim"],
        verdict=verdict,
        votes=votes,
        tie_break=tie,
        rounds=state.get("rounds", round_no),
        stop_reason=state.get("stop_reason", "round_limit"),
        queries=used_queries(state.get("knowledge", [])),
    )
    return {"claim_results": [result], "errors": errors}


def jury_record(results: list[ClaimResult], verdict: str | None, stop: str) -> DecidedBy:
    """Provenance of MAD-Fact's answer verdict: one jury majority per claim, then the rule."""
    rounds = max((r.get("rounds", 0) for r in results), default=0)
    if not results:
        return decided("clerk", 0, stop, "The clerk found no checkable claim in the answer.")
    why = Counter(str(r.get("stop_reason", "round_limit")) for r in results)
    ties = sum(1 for r in results if r.get("tie_break"))
    false = [r.get("claim_id", 0) + 1 for r in results if r.get("verdict") == "FALSE"]
    open_ = [r.get("claim_id", 0) + 1 for r in results if r.get("verdict") is None]
    detail = (
        f"Each of {len(results)} claim(s) was decided by a jury majority of the last round "
        f"({', '.join(f'{n} by {k}' for k, n in sorted(why.items()))}; {ties} tie break(s)). "
    )
    if verdict == "NOT FACTUAL":
        detail += f"Claim(s) {', '.join(map(str, false))} judged FALSE: the answer is not factual."
    elif verdict == "FACTUAL":
        detail += "Every claim was judged TRUE: the answer is factual."
    else:
        detail += f"Claim(s) {', '.join(map(str, open_))} got no verdict: no answer-level verdict."
    return decided("jury", rounds, stop, detail)


def route_turn(state: JuryState) -> Literal["search", "speak"]:
    """Search before speaking, or speak directly."""
    return route(state, {"search": "search", "speak": "speak"})


def route_after_turn(state: JuryState) -> Literal["plan_turn", "judge"]:
    """Next juror / next round, or the judge."""
    return route(state, {"judge": "judge", "next": "plan_turn"})
