"""The shared parsers read what capable models write: every recorded answer, the realistic forms."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from ragas.metrics.collections.answer_relevancy.util import AnswerRelevanceOutput
from ragas.metrics.collections.faithfulness.util import NLIStatementOutput, StatementGeneratorOutput

from factdebate.nodes.debate_cv.moderator import FinalVerdict, ModeratorDecision
from factdebate.nodes.mad_fact.clerk import ClaimList
from factdebate.nodes.madam_rag.aggregate import AnswerList
from factdebate.nodes.madam_rag.doc_agent import AgentAnswer
from factdebate.nodes.parse import (
    ParseFailure,
    parse_confidence,
    parse_label,
    parse_query,
    parse_truth,
    wants_search,
)
from factdebate.prompts.labels import LABELS_4
from factdebate.tools.models.json_reader import read_model
from tests.capable import bold_last_line, fenced_json, recorded

JSON_KINDS: dict[str, type[BaseModel]] = {
    "moderator-json": ModeratorDecision,
    "aggregator-json": AnswerList,
    "document-agent-json": AgentAnswer,
    "clerk-claims": ClaimList,
    "ragas-statements": StatementGeneratorOutput,
    "ragas-faithfulness-verdicts": NLIStatementOutput,
    "ragas-relevance-question": AnswerRelevanceOutput,
}


@pytest.mark.parametrize("kind", ["debater-label", "judge-label"])
def test_every_recorded_label_reads_as_a_person_reads_it(kind: str) -> None:
    rows = recorded(kind)
    assert rows
    for row in rows:
        assert parse_label(row["answer"]) == bold_last_line(row["answer"]), row["call"]


def test_every_recorded_juror_opinion_and_confidence_reads() -> None:
    opinions, confidences = recorded("juror-opinion"), recorded("juror-confidence")
    assert len(opinions) == 90 and len(confidences) == 45
    for row in opinions:
        assert parse_truth(row["answer"]) == bold_last_line(row["answer"])
    for row in confidences:
        last = row["answer"].strip().splitlines()[-1]
        assert parse_confidence(row["answer"]) == pytest.approx(float(last.split(":")[1]))


def test_every_recorded_query_reads_without_its_brackets() -> None:
    for row in recorded("query"):
        query = parse_query(row["answer"])
        assert isinstance(query, str) and query == row["answer"].strip().strip("[]")


@pytest.mark.parametrize("kind", sorted(JSON_KINDS))
def test_every_recorded_json_answer_parses_to_what_it_says(kind: str) -> None:
    rows = recorded(kind)
    assert rows
    for row in rows:
        parsed = read_model(row["answer"], JSON_KINDS[kind])
        assert not isinstance(parsed, str), (row["call"], parsed)
        said = fenced_json(row["answer"])
        dumped = parsed.model_dump()
        for key, value in said.items():
            if key == "verdict" and isinstance(value, str):  # labels are canonicalised
                assert dumped[key] in LABELS_4
            else:
                assert dumped[key] == value, (row["call"], key)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("Reasoning.\n**NEI**", None, "NOT ENOUGH INFO"),
        ("Reasoning.\nVerdict: Insufficient evidence", None, "NOT ENOUGH INFO"),
        ("The documents agree.\nTherefore the claim is Supported.", None, "SUPPORTS"),
        ("The date is wrong.\nSo the claim is refuted by document 2.", None, "REFUTES"),
        ("Verdict: REFUTES (the documents do not support it)", None, "REFUTES"),
        ("Final answer:\n**supports**\nHope this helps!", None, "SUPPORTS"),
        ("It points both ways.\nConflicting Evidence/Cherry-picking", LABELS_4, "CONFLICTING"),
        ("Misleading.\n**Cherry-picking**", LABELS_4, "CONFLICTING"),
    ],
)
def test_realistic_label_forms_read(
    text: str, labels: tuple[str, ...] | None, expected: str
) -> None:
    assert (parse_label(text, labels) if labels else parse_label(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The evidence is thin.\nThe claim is not supported by the documents.",
        "Nothing here.\nIt cannot be refuted or supported from these documents.",
        "Both sides.\n**SUPPORTS** or **REFUTES**",
        "Neither supported nor refuted.",
        "I am not sure.",
        "",
    ],
)
def test_negated_or_ambiguous_labels_are_parse_failures_never_guesses(text: str) -> None:
    assert isinstance(parse_label(text), ParseFailure)


def test_a_negated_label_is_never_read_as_that_label() -> None:
    for word in ("supported", "SUPPORTS", "refuted"):
        result = parse_label(f"Some reasoning.\nThe claim is not {word}.")
        assert isinstance(result, ParseFailure)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Obama was president.\nVerdict: True", "TRUE"),
        ("The claim is wrong.\n**false**", "FALSE"),
        ("Looks right.\nThe claim is correct.", "TRUE"),
    ],
)
def test_juror_truth_forms_read(text: str, expected: str) -> None:
    assert parse_truth(text) == expected


def test_negated_truth_is_a_parse_failure() -> None:
    assert isinstance(parse_truth("Reasoning.\nThis is not true."), ParseFailure)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fairly sure.\nConfidence: 8/10", 0.8),
        ("CONFIDENCE: 0.35", 0.35),
        ("Confidence level: 90%", 0.9),
        ("**Confidence:** 0.7", 0.7),
        ("Confidence: 75/100", 0.75),
    ],
)
def test_confidence_forms_read(text: str, expected: float) -> None:
    assert parse_confidence(text) == pytest.approx(expected)


def test_react_action_search_reads_its_own_query_not_a_citation() -> None:
    text = (
        "Thought: document [1] is about Paris, I need the date.\nAction: Search[Eiffel Tower built]"
    )
    assert wants_search(text)
    assert parse_query(text) == "Eiffel Tower built"
    assert wants_search("SEARCH: [penicillin discovery year]")
    assert not wants_search("The documents [1] say so.\n**SUPPORTS**")


@pytest.mark.parametrize(
    "text",
    [
        'Here it is: {"answer": "1904", "explanation": "doc says so"}\nNote: braces {like this}.',
        '```json\n{"answer": "1904", "explanation": "doc says so",}\n```',
        "{'answer': '1904', 'explanation': 'doc says so'}",
    ],
)
def test_json_with_prose_trailing_commas_or_quotes_reads(text: str) -> None:
    parsed = read_model(text, AgentAnswer)
    assert isinstance(parsed, AgentAnswer) and parsed.answer == "1904"


def test_json_cut_at_the_cap_is_not_repaired_into_a_shorter_list() -> None:
    cut = '```json\n{"statements": ["one", "two", "thr'
    assert isinstance(read_model(cut, StatementGeneratorOutput), str)


def test_the_moderators_paper_keys_read() -> None:
    text = (
        '{"Primary Insight": "Both sides repeat themselves.", "Evidence Gaps": "None.", '
        '"Justification for Proceeding": "Converged.", "Proceeding Necessity": "No", '
        '"Justification for Verdict": "Document 1 contradicts it.", "Verdict": "Refuted"}'
    )
    parsed = read_model(text, ModeratorDecision)
    assert isinstance(parsed, ModeratorDecision)
    assert (parsed.proceed, parsed.verdict, parsed.reason) == (False, "REFUTES", "Converged.")
    final = read_model('{"Justification for Verdict": "x", "Verdict": "NEI"}', FinalVerdict)
    assert isinstance(final, FinalVerdict) and final.verdict == "NOT ENOUGH INFO"


ROLE_OF_KIND = {
    "query": "debater",
    "debater-label": "debater",
    "debater-argument": "debater",
    "judge-label": "judge",
    "moderator-json": "moderator",
    "aggregator-json": "aggregator",
    "document-agent-json": "agent",
    "clerk-claims": "clerk",
    "juror-confidence": "debater",
    "juror-opinion": "debater",
    "ragas-statements": "scorer",
    "ragas-faithfulness-verdicts": "scorer",
    "ragas-relevance-question": "scorer",
}


async def test_every_recorded_answer_survives_a_provider_at_default_caps() -> None:
    """Each recorded prompt goes through an OpenAI-compatible server that cuts at the cap."""
    from factdebate.nodes.context import Context
    from factdebate.tools.models.llm import ask, ask_structured
    from factdebate.tools.models.providers import resolve_model
    from tests.fake_provider import fake_provider

    rows = recorded()
    by_prompt = {row["prompt"]: row["answer"] for row in rows}
    ctx = Context(current_date="2026-11-23")

    def responder(prompt: str, body: dict[str, object]) -> str:
        return next(answer for p, answer in by_prompt.items() if p in prompt)

    with fake_provider(responder) as provider:
        model = resolve_model(provider.model())
        for row in rows:
            site = ctx.site(role=ROLE_OF_KIND[row["kind"]], agent="a", stage=row["kind"])
            if row["kind"] in JSON_KINDS:
                schema = JSON_KINDS[row["kind"]]
                # The recorded prompts already carry the schema text; ask as the code does.
                parsed, reply = await ask_structured(model, row["prompt"], schema, site)
                assert parsed is not None, (row["call"], reply.errors)
            else:
                reply = await ask(model, row["prompt"], site)
                assert reply.text == row["answer"]
            assert not reply.truncated and not reply.errors, (row["method"], row["call"])
    assert all(r["finish"] == "stop" for r in provider.replies)
    assert len(provider.replies) == len(rows)
