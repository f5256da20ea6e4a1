"""The verdict block prints the judge's reasoning without a lead-in left dangling."""

from __future__ import annotations

import pytest

from factdebate.cli.show import print_result


def result(justification: str) -> dict[str, object]:
    return {
        "verdict": "SUPPORTS",
        "stop_reason": "round_limit",
        "rounds": 3,
        "justification": justification,
        "cost": {"total": {"llm_calls": 9, "input_tokens": 10, "output_tokens": 5}},
        "errors": [],
    }


def test_a_bare_scores_lead_in_is_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    print_result(result("The documents place the tower in Paris.\nScores:\n**SUPPORTS**"))
    printed = capsys.readouterr().out
    assert "The documents place the tower in Paris." in printed
    assert "Scores:" not in printed


def test_a_justification_that_only_restates_the_label_prints_no_empty_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_result(result("Scores:\n**SUPPORTS**"))
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.strip() in ("Scores:", "**SUPPORTS**") for line in lines)
    assert lines[-1].startswith("LLM calls 9")
