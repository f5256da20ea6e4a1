"""`factdebate score-answer`: one-line errors for a bad answer file, a JSON result otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from factdebate.cli import app

runner = CliRunner()


def test_score_answer_errors_are_one_line(tmp_path: Path, data_home):
    missing = runner.invoke(app, ["score-answer", "--answer-file", str(tmp_path / "none.txt")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n")
    result = runner.invoke(app, ["score-answer", "--answer-file", str(empty)])
    assert result.exit_code == 2 and "empty" in result.output
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    result = runner.invoke(app, ["score-answer", "--answer-file", str(binary)])
    assert result.exit_code == 2 and "UTF-8" in result.output


def test_score_answer_json(tmp_path: Path, data_home, scripted, fake_tools):
    answer = tmp_path / "answer.txt"
    answer.write_text("The Eiffel Tower is in Paris. You should visit it.")
    name, _ = scripted(
        [
            ("ClaimList", '{"claims": ["The Eiffel Tower is in Paris."]}'),
        ],
        default="It is in Paris.\n**TRUE**",
    )
    result = runner.invoke(
        app,
        [
            "score-answer",
            "--answer-file",
            str(answer),
            "--question",
            "Where is the Eiffel Tower?",
            "--model",
            name,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert [c["claim"] for c in payload["claims"]] == ["The Eiffel Tower is in Paris."]
    assert "precision" in payload["scores"]
