"""Bad input: binary, invalid UTF-8, endless or over-long input, bad lines, hostile parsers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.nodes.debate_cv.moderator import FinalVerdict, ModeratorDecision
from factdebate.nodes.mad_fact.clerk import ClaimList, keep_checkable
from factdebate.nodes.madam_rag.aggregate import AnswerList
from factdebate.nodes.madam_rag.doc_agent import AgentAnswer
from factdebate.nodes.parse import ParseFailure, parse_confidence, parse_truth
from factdebate.tools.models.json_reader import read_model
from factdebate.tools.scoring.answers import clean_answers
from tests.conftest import REPO
from tests.reliability.child_cli import one_line_exit, run_cli_limited

runner = CliRunner()
SHARED = REPO.parent / "shared" / "datasets"

BAD_CLAIMS = [
    (b"\xff\xfe\x00 binary", "not valid UTF-8"),
    (b"abc\x00def", "binary data (NUL bytes)"),
    (b"\xc3\x28 broken utf-8", "not valid UTF-8"),
    (b"   \n\t ", "empty"),
    (("word " * 1000).encode(), "the limit is 2000"),
]


def one_line_error(result, message: str) -> None:
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 3


@pytest.mark.parametrize(("raw", "message"), BAD_CLAIMS)
def test_verify_stdin_rejects_bad_bytes_before_any_model_call(raw, message, scripted, data_home):
    name, model = scripted([])
    result = runner.invoke(app, ["verify", "-", "--model", name, "--method", "cot"], input=raw)
    one_line_error(result, message)
    assert model.prompts == []


@pytest.mark.parametrize(("raw", "message"), BAD_CLAIMS[:4])
def test_score_answer_file_rejects_bad_bytes(raw, message, scripted, tmp_path, data_home):
    name, model = scripted([])
    path = tmp_path / "answer.txt"
    path.write_bytes(raw)
    result = runner.invoke(app, ["score-answer", "--answer-file", str(path), "--model", name])
    one_line_error(result, message.replace("claim", "answer"))
    assert str(path) in result.output.replace("\n", "")
    assert model.prompts == []


def test_score_answer_over_long_file(scripted, tmp_path, data_home):
    name, model = scripted([])
    path = tmp_path / "long.txt"
    path.write_bytes(b"The sky is blue. " * 3000)
    result = runner.invoke(app, ["score-answer", "--answer-file", str(path), "--model", name])
    one_line_error(result, "the limit is 20000")
    assert model.prompts == []


def test_score_answer_missing_file(tmp_path, data_home):
    result = runner.invoke(app, ["score-answer", "--answer-file", str(tmp_path / "nope.txt")])
    one_line_error(result, "no such file")


@pytest.mark.skipif(
    not (SHARED / "fever" / "fever_rag_mini").is_dir(), reason="shared FEVER mini dataset absent"
)
def test_bench_reports_a_malformed_line_with_file_and_line_and_runs_the_rest(
    scripted, tmp_path, data_home
):
    src = SHARED / "fever" / "fever_rag_mini"
    dst = tmp_path / "data" / "fever" / "fever_rag_mini"
    dst.mkdir(parents=True)
    shutil.copy(src / "corpus.jsonl", dst / "corpus.jsonl")
    good = (src / "claims.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    lines = [good[0], '{"id": 1, "claim": "broken', good[1], '["not", "an object"]', good[2]]
    (dst / "claims.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out_dir = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "bench",
            "--out",
            str(out_dir),
            "--method",
            "cot",
            "--dataset",
            "fever-mini",
            "--data-dir",
            str(tmp_path / "data"),
            "--model",
            name,
        ],
    )
    assert result.exit_code == 0, result.output
    claims = dst / "claims.jsonl"
    report = (out_dir / "report.md").read_text(encoding="utf-8")
    for text in (report, result.output):
        assert f"{claims}:2: invalid JSON" in text
        assert f"{claims}:4: expected a JSON object" in text
    rows = [json.loads(x) for x in (out_dir / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and len(model.prompts) == 3


# ----------------------------------------------------------- parsers: total on any string

ANY_TEXT = st.one_of(
    st.text(max_size=400),
    st.builds(lambda a, b: f"{a}{{{b}}}", st.text(max_size=50), st.text(max_size=200)),
    st.builds(
        lambda d: json.dumps(d),
        st.dictionaries(
            st.sampled_from(
                [
                    "answers",
                    "answer",
                    "explanation",
                    "claims",
                    "verdict",
                    "proceed",
                    "new_insight",
                    "evidence_gaps",
                    "reason",
                    "justification",
                ]
            ),
            st.one_of(
                st.text(max_size=30),
                st.booleans(),
                st.none(),
                st.integers(),
                st.lists(st.text(max_size=20), max_size=4),
            ),
            max_size=8,
        ),
    ),
)


@settings(max_examples=150, deadline=None)
@given(ANY_TEXT)
def test_madam_answer_lists_parse_to_a_model_or_an_error_text(text: str) -> None:
    for schema in (AnswerList, AgentAnswer):
        parsed = read_model(text, schema)
        assert isinstance(parsed, schema | str)
        if isinstance(parsed, AnswerList):
            cleaned = clean_answers(parsed.answers)
            assert all(isinstance(a, str) and a.strip() for a in cleaned)


@settings(max_examples=150, deadline=None)
@given(ANY_TEXT)
def test_debate_cv_moderator_output_is_validated_or_rejected(text: str) -> None:
    decision = read_model(text, ModeratorDecision)
    assert isinstance(decision, ModeratorDecision | str)
    if isinstance(decision, ModeratorDecision) and not decision.proceed:
        assert decision.verdict in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "CONFLICTING")
    final = read_model(text, FinalVerdict)
    assert isinstance(final, FinalVerdict | str)


@settings(max_examples=150, deadline=None)
@given(ANY_TEXT)
def test_mad_fact_clerk_claims_parse_or_fail_typed(text: str) -> None:
    parsed = read_model(text, ClaimList)
    assert isinstance(parsed, ClaimList | str)
    if isinstance(parsed, ClaimList):
        kept, dropped = keep_checkable(parsed.claims)
        assert all(isinstance(c, str) for c in kept + dropped)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_jury_opinion_and_confidence_parsers_are_total(text: str) -> None:
    truth = parse_truth(text)
    assert truth in ("TRUE", "FALSE") or isinstance(truth, ParseFailure)
    confidence = parse_confidence(text)
    assert isinstance(confidence, ParseFailure) or 0.0 <= confidence <= 1.0


@given(st.text(max_size=100), st.sampled_from(["TRUE", "FALSE"]))
def test_a_bold_truth_label_on_the_last_line_is_read(prefix: str, label: str) -> None:
    text = prefix.replace("TRUE", "").replace("FALSE", "").replace("*", "")
    assert parse_truth(f"{text}\n**{label}**") == label


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_documents_from_dev_zero_are_refused_without_reading_them(tmp_path: Path):
    done = run_cli_limited(
        ["verify", "When was Jordan born?", "--method", "madam-rag", "--documents", "/dev/zero"]
    )
    one_line_exit(done.returncode, done.stderr + done.stdout, "/dev/zero is not a regular file")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_a_claim_on_stdin_is_read_with_a_size_limit(tmp_path: Path):
    with open("/dev/zero", "rb") as zero:
        done = run_cli_limited(["verify", "-", "--method", "cot"], stdin=zero)
    one_line_exit(done.returncode, done.stderr + done.stdout, "claim on stdin is over")


def test_score_answer_given_a_folder_gives_a_one_line_error(tmp_path: Path, scripted):
    from typer.testing import CliRunner

    from factdebate.cli import app

    name, model = scripted([])
    result = CliRunner().invoke(
        app, ["score-answer", "--answer-file", str(tmp_path), "--model", name]
    )
    one_line_exit(result.exit_code, result.output, "is a folder; the answer file must be a file")
    assert model.prompts == []
