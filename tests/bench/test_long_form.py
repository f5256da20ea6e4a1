"""LongFact end to end: gen-answers writes answers (resumable), score-answers scores folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.running.long_form import ANSWERS_FILE, SCORES_FILE, SUMMARY_FILE
from factdebate.cli import app
from tests.nodes.mad_fact.test_graph import CLAIM, CLAIM2, clerk_rule, confidence, opinion


def longfact(root: Path) -> Path:
    """A LongFact-shaped folder: two topic files of prompts (plus the canary field)."""
    folder = root / "longfact" / "longfact-objects_gpt4_01-12-2024_noduplicates"
    folder.mkdir(parents=True)
    for topic, names in (("moon", ["the Moon", "Mars"]), ("towers", ["the Eiffel Tower"])):
        lines = [json.dumps({"prompt": f"Tell me about {n}.", "canary": "x"}) for n in names]
        (folder / f"longfact-objects_{topic}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def gen(root: Path, out: Path, model: str, *extra: str) -> Any:
    args = ["gen-answers", "--out", str(out), "--model", model, "--data-dir", str(root)]
    return CliRunner().invoke(app, [*args, *extra])


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_gen_answers_writes_resumes_and_refuses_another_model(tmp_path: Path, scripted) -> None:
    root = longfact(tmp_path)
    name, model = scripted([], default="A long answer with several facts.")
    model.rules = [("Mars", RuntimeError("provider down"))]
    out = tmp_path / "answers"
    result = gen(root, out, name)
    assert result.exit_code == 1, result.output  # one prompt failed
    assert "new 2, skipped 0, failed 1" in result.output
    written = {r["id"]: r for r in rows(out / ANSWERS_FILE)}
    assert len(written) == 3 and len(model.prompts) == 3
    ok = written["longfact-objects_moon-1"]
    assert ok["answer"] == "A long answer with several facts." and ok["topic"] == "moon"
    assert ok["prompt"] == "Tell me about the Moon." and ok["cost"]["writer"]["llm_calls"] == 1
    failed = written["longfact-objects_moon-2"]
    assert failed["answer"] is None and failed["errors"][0]["kind"] == "model_error"

    model.rules = []  # the provider is back: only the failed prompt is asked again
    model.prompts.clear()
    result = gen(root, out, name)
    assert result.exit_code == 0 and "new 1, skipped 2, failed 0" in result.output
    assert model.prompts == ["Tell me about Mars."]
    assert all(r["answer"] for r in rows(out / ANSWERS_FILE)) and len(rows(out / ANSWERS_FILE)) == 3

    other, _ = scripted([], default="x")
    result = gen(root, out, other)
    assert result.exit_code == 2 and "different model" in result.output


def test_gen_answers_limit_and_bad_prompt_set(tmp_path: Path, scripted) -> None:
    root = longfact(tmp_path)
    name, model = scripted([], default="Answer.")
    result = gen(root, tmp_path / "a", name, "--limit", "2", "--seed", "1")
    assert result.exit_code == 0 and len(rows(tmp_path / "a" / ANSWERS_FILE)) == 2 == len(
        model.prompts
    )
    result = CliRunner().invoke(
        app, ["gen-answers", "--out", str(tmp_path / "b"), "--model", name, "--dataset", "felm"]
    )
    assert result.exit_code == 2 and "unknown prompt set 'felm'" in result.output


def jury_model(scripted) -> tuple[str, Any]:
    """The clerk splits each answer into two claims; the jury finds one true, one false."""
    return scripted(
        [
            clerk_rule([CLAIM, CLAIM2]),
            confidence(0.9),
            opinion("TRUE", claim=CLAIM),
            opinion("FALSE", claim=CLAIM2),
        ]
    )


def write_answers(folder: Path, model: str, n: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"dataset": "longfact", "model": model}))
    lines = [
        json.dumps({"id": f"p{i}", "prompt": "Tell me about the Eiffel Tower.", "answer": "Long."})
        for i in range(n)
    ]
    (folder / ANSWERS_FILE).write_text("\n".join(lines) + "\n")
    return folder


def test_score_answers_scores_folders_and_resumes(tmp_path: Path, scripted, fake_tools) -> None:
    name, model = jury_model(scripted)
    a = write_answers(tmp_path / "a", "model-a", 2)
    b = write_answers(tmp_path / "b", "model-b", 1)
    args = ["score-answers", str(a), str(b), "--model", name, "--set", "merge_method=text"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "| model-a | 2 | 2 | 2.000 | 1.000 | 1.000 | 0.500 | - |" in result.output
    assert "| model-b | 1 | 1 | 2.000 | 1.000 | 1.000 | 0.500 | - |" in result.output
    scored = rows(a / SCORES_FILE)
    assert [r["id"] for r in scored] == ["p0", "p1"]
    assert scored[0]["claims"] == [
        {"claim": CLAIM, "verdict": "TRUE"},
        {"claim": CLAIM2, "verdict": "FALSE"},
    ]
    assert json.loads((a / SUMMARY_FILE).read_text())["precision"] == pytest.approx(0.5)

    clerk_calls = model.calls_with("You are the clerk")
    (a / SCORES_FILE).write_text(json.dumps(scored[0]) + "\n")  # lose one scored answer
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0
    assert model.calls_with("You are the clerk") == clerk_calls + 1  # only p1 scored again
    assert len(rows(a / SCORES_FILE)) == 2


def test_score_answers_needs_answers(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["score-answers", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no answers in answers.jsonl" in result.output
