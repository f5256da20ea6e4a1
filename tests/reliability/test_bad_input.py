"""Bad input: binary, invalid UTF-8, endless or over-long input, bad lines, hostile parsers."""

from __future__ import annotations

import json
import os
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
from tests.bounded import COMMAND_GUARD_S, run_bounded
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


# ------------------------------------------- input as given or refused, in one line each


def test_a_claim_argument_with_an_invalid_byte_is_refused_like_stdin(tmp_path: Path):
    """``caf\\xe9 au lait`` as argv bytes: refused, never run as "caf au lait"."""
    import sys

    done = run_bounded(
        [sys.executable, "-m", "factdebate.cli", "verify", b"caf\xe9 au lait", "--method", "cot"],
        capture_output=True,
        text=True,
        what="verify with an invalid byte",
        guard_s=COMMAND_GUARD_S,
        cwd=REPO,
        env={**os.environ, "FACTDEBATE_HOME": str(tmp_path / "home")},
    )
    output = done.stderr + done.stdout
    one_line_exit(done.returncode, output, "the claim is not valid UTF-8 text (byte 0xe9 at")
    assert "caf au lait" not in output


def test_a_lone_surrogate_in_a_claim_is_refused_by_the_api():
    from factdebate.nodes.claims import InputError, clean_claim

    for text in ("caf\udce9 au lait", "half an emoji \ud83d here"):
        with pytest.raises(InputError, match="not valid UTF-8 text"):
            clean_claim(text)
    assert clean_claim("café au lait") == "café au lait"


DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("deep.jsonl", DEEP + "\n", "not JSON (nested too deeply to read)"),
        ("control.jsonl", '{"id": "1", "text": "a\x01b"}\n', "Invalid control character at column"),
        ("long.jsonl", '{"id": "1", "text": "' + "x" * (17 * 1024**2) + '"}\n', "longer than"),
    ],
)
def test_a_documents_file_of_bad_json_is_one_line(name, text, message, tmp_path, scripted):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    model_name, model = scripted([])
    args = ["verify", "Jordan was born in 1963.", "--method", "debate-cv", "--model", model_name]
    result = runner.invoke(app, [*args, "--documents", str(path)])
    one_line_error(result, message)
    assert "at at" not in result.output and model.prompts == []


def test_a_references_file_nested_too_deeply_is_one_line(tmp_path, scripted, data_home):
    name, model = scripted([])
    answer = tmp_path / "answer.txt"
    answer.write_text("The sky is blue.")
    references = tmp_path / "refs.json"
    references.write_text(DEEP)
    result = runner.invoke(
        app,
        ["score-answer", "--answer-file", str(answer), "--references", str(references)]
        + ["--model", name],
    )
    one_line_error(result, "not valid JSON (nested too deeply to read)")
    assert model.prompts == []


def test_json_text_is_read_or_refused_with_its_place():
    from factdebate.tools.core.json_text import json_problem, parse_json

    assert parse_json('{"a": [1, 2]}') == {"a": [1, 2]}
    for text, problem in (
        (DEEP, "nested too deeply to read"),
        ('{"a": "x\x01"}', "Invalid control character at line 1, column 9"),
        ('{"a": 1,,}', "Expecting property name enclosed in double quotes at line 1, column 9"),
    ):
        with pytest.raises(json.JSONDecodeError) as caught:
            parse_json(text)
        assert json_problem(caught.value) == problem


@pytest.mark.parametrize("raw", ["²", "٣", "1_0", "+3", "-1", "0x10", "3.0", "9" * 40, "1e3"])
def test_numeric_environment_variables_refuse_what_is_not_a_plain_number(raw, monkeypatch):
    from factdebate.tools.core.env import env_float, env_int
    from factdebate.tools.core.errors import SettingsError
    from factdebate.tools.core.records import ModelConfigError
    from factdebate.tools.models.local_llm import THREADS_ENV, llama_threads, prefix_cache_mb

    monkeypatch.setenv("FACTDEBATE_SOME_COUNT", raw)
    with pytest.raises(
        SettingsError, match=r"^FACTDEBATE_SOME_COUNT must be a whole number 1\.\.9"
    ):
        env_int("FACTDEBATE_SOME_COUNT", 2, 1, 9)
    monkeypatch.setenv(THREADS_ENV, raw)
    with pytest.raises(ModelConfigError, match=f"^{THREADS_ENV} must be .* or 'idle', got"):
        llama_threads()
    monkeypatch.setenv("FACTDEBATE_LLAMA_CACHE_MB", raw)
    with pytest.raises(ModelConfigError, match="FACTDEBATE_LLAMA_CACHE_MB"):
        prefix_cache_mb()
    if raw != "3.0":
        with pytest.raises(SettingsError, match="must be a number 0..600"):
            monkeypatch.setenv("FACTDEBATE_INDEX_WAIT_S", raw)
            env_float("FACTDEBATE_INDEX_WAIT_S", 10.0, 0.0, 600.0)


def test_numeric_environment_variables_parse_plain_numbers(monkeypatch):
    from factdebate.tools.core.env import env_float, env_int

    for raw, whole, number in ((" 7 ", 7, 7.0), ("", 2, 10.0), ("600", None, 600.0)):
        monkeypatch.setenv("FACTDEBATE_X", raw)
        if whole is not None:
            assert env_int("FACTDEBATE_X", 2, 1, 9) == whole
        assert env_float("FACTDEBATE_X", 10.0, 0.0, 600.0) == number
    monkeypatch.setenv("FACTDEBATE_X", ".5")
    assert env_float("FACTDEBATE_X", 10.0, 0.0, 600.0) == 0.5
    for bad in ("nan", "inf", "-1", "601"):
        monkeypatch.setenv("FACTDEBATE_X", bad)
        with pytest.raises(ValueError, match="FACTDEBATE_X must be a number"):
            env_float("FACTDEBATE_X", 10.0, 0.0, 600.0)


def test_a_bad_number_in_the_environment_stops_the_cli_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FACTDEBATE_INDEX_WAIT_S", "²")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "1", "text": "The Sun is a star."}\n')
    result = runner.invoke(app, ["index", str(corpus), "--collection", "envs"])
    one_line_error(result, "FACTDEBATE_INDEX_WAIT_S must be a number 0..600, got '²'")


@pytest.mark.parametrize("raw", ["١", "1_0", "²", "½"])
def test_a_set_number_in_another_script_or_with_underscores_is_refused(raw, scripted, data_home):
    name, model = scripted([])
    args = ["verify", "The sky is blue.", "--method", "cot", "--model", name]
    result = runner.invoke(app, [*args, "--set", f"max_rounds={raw}"])
    one_line_error(result, f"--set max_rounds expects an integer, got {raw!r}")
    assert model.prompts == []
