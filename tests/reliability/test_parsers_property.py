"""Property tests: every parser of model output turns any string into a value or a ParseFailure."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from factdebate.nodes.claims import InputError, clean_claim
from factdebate.nodes.evidence_block import render_evidence, sanitize
from factdebate.nodes.parse import (
    ParseFailure,
    parse_confidence,
    parse_label,
    parse_query,
    parse_truth,
)
from factdebate.prompts.labels import LABELS_3
from factdebate.tools.models.json_reader import read_model

any_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=400)


@given(any_text)
def test_parse_label_returns_a_known_label_or_failure(text: str) -> None:
    result = parse_label(text)
    assert result in LABELS_3 or isinstance(result, ParseFailure)
    if isinstance(result, ParseFailure):
        assert result.raw == text and result.reason


@given(any_text, st.sampled_from(LABELS_3))
def test_a_label_alone_on_the_last_line_is_always_read(prefix: str, label: str) -> None:
    text = prefix.replace("*", "") + f"\n**{label}**"
    other = [x for x in LABELS_3 if x != label]
    if not any(o in text.upper().replace("_", " ").split("\n")[-1] for o in other):
        assert parse_label(text) == label


@given(any_text)
def test_parse_query_is_total(text: str) -> None:
    result = parse_query(text)
    assert isinstance(result, ParseFailure) or (isinstance(result, str) and result.strip())


class Verdict(BaseModel):
    label: str
    confidence: float


@settings(max_examples=200)
@given(any_text)
def test_parse_json_model_is_total(text: str) -> None:
    result = read_model(text, Verdict)
    assert isinstance(result, Verdict | str)


@given(st.text(max_size=50), st.floats(allow_nan=False, allow_infinity=False))
def test_parse_json_model_reads_embedded_json(label: str, confidence: float) -> None:
    payload = Verdict(label=label, confidence=confidence).model_dump_json()
    assert read_model(f"Sure! {payload} done", Verdict) == Verdict(
        label=label, confidence=confidence
    )


@given(st.one_of(any_text, st.binary(max_size=200)))
def test_clean_claim_gives_text_or_input_error(raw: str | bytes) -> None:
    try:
        cleaned = clean_claim(raw, max_chars=300)
    except InputError as exc:
        assert str(exc)
    else:
        assert cleaned and cleaned == cleaned.strip() and len(cleaned) <= 300


@given(any_text)
def test_sanitized_evidence_cannot_close_its_fence(text: str) -> None:
    rendered = render_evidence(
        [{"id": "d", "title": text[:30], "text": text, "source": "t", "score": 0.0}], 500
    )
    assert rendered.count("</evidence>") == 1 and rendered.endswith("</evidence>")
    assert rendered.count("<evidence") == 1
    assert len(sanitize(text, 100)) <= 106


@given(st.text(max_size=200))
def test_control_character_check_agrees_with_unicode_categories(text: str) -> None:
    """The C-speed shortcut says "no control characters" exactly when none is there."""
    import unicodedata

    from factdebate.nodes.evidence_block import _no_control

    has_control = any(ch not in "\n\t" and unicodedata.category(ch)[0] == "C" for ch in text)
    if _no_control(text):
        assert not has_control
    cleaned = sanitize(text, None)
    assert not any(ch not in "\n\t" and unicodedata.category(ch)[0] == "C" for ch in cleaned)


@given(any_text)
def test_truth_and_confidence_parsers_are_total(text: str) -> None:
    truth = parse_truth(text)
    assert truth in ("TRUE", "FALSE") or isinstance(truth, ParseFailure)
    confidence = parse_confidence(text)
    assert isinstance(confidence, ParseFailure) or 0.0 <= confidence <= 1.0


negatable = st.sampled_from(["supported", "SUPPORTS", "refuted", "Refutes", "true"])


@given(any_text, negatable, st.sampled_from(["not", "NOT", "cannot be", "isn't"]))
def test_a_negated_label_on_the_last_line_is_never_read_as_that_label(
    prefix: str, word: str, negation: str
) -> None:
    text = f"{prefix}\nThe claim is {negation} {word}."
    meant = {"SUPPORTED": "SUPPORTS", "REFUTED": "REFUTES"}.get(word.upper(), word.upper())
    assert parse_label(text) != meant
    assert parse_truth(text) != meant
