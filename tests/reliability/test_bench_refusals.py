"""Bench refusals: a bad model, another copy of the data or a missing index stop a run at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factdebate.cli import app
from tests.reliability.bench_cli import bench_args, fever_mini, one_line_error, runner

pytestmark = pytest.mark.usefixtures("data_home")  # each test indexes (if at all) into its own home


@pytest.mark.parametrize(
    "model_args",
    [
        ["--model", "nonsense:foo"],
        ["--set", "judge_model=nonsense:foo"],
        ["--model", "openai-compatible:fake"],
    ],
    ids=["unknown-provider", "judge-model", "compatible-without-url"],
)
def test_bench_refuses_a_bad_model_before_any_item_runs(
    model_args: list[str], tmp_path: Path, scripted
) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    args = bench_args(out, fever_mini(tmp_path / "data"), name)
    args = [*args[:-2], *(model_args if model_args[0] == "--model" else [*args[-2:], *model_args])]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "nonsense:foo" in result.output or "openai-compatible:MODEL@" in result.output
    assert model.prompts == []
    assert not (out / "results.jsonl").exists()


def test_resume_refuses_another_copy_of_the_dataset(tmp_path: Path, scripted) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    first = fever_mini(tmp_path / "one")
    assert runner.invoke(app, bench_args(out, first, name)).exit_code == 0
    calls = len(model.prompts)
    assert runner.invoke(app, bench_args(out, first, name)).exit_code == 0  # same data: resumes
    assert len(model.prompts) == calls
    other = fever_mini(tmp_path / "two", labels=("REFUTES", "REFUTES", "SUPPORTS"))
    result = runner.invoke(app, bench_args(out, other, name))
    one_line_error(result, "holds a run with different data")
    assert len(model.prompts) == calls
    rows = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 3


def test_medqa_without_the_pubmed_index_names_index_corpus(
    tmp_path: Path, data_home: Path, scripted
) -> None:
    question = {
        "question": "Which vitamin?",
        "options": {"A": "C", "B": "D", "C": "K", "D": "B12"},
        "answer_idx": "B",
    }
    (tmp_path / "medqa").mkdir()
    (tmp_path / "medqa" / "test.jsonl").write_text(json.dumps(question) + "\n", "utf-8")
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    args = ["bench", "--out", str(tmp_path / "run"), "--method", "tool-mad", "--dataset", "medqa"]
    result = runner.invoke(app, [*args, "--data-dir", str(tmp_path), "--model", name])
    one_line_error(result, "factdebate index-corpus pubmedqa")
    assert model.prompts == []
