"""The debate-vs-vote suite: which runs it makes, in which order, and the comparison it writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.suite import (
    COMPARISON,
    COMPARISON_PAGE,
    SuitePlan,
    check_shared_settings,
    plan_suite,
    write_comparison,
)
from factdebate.bench.running.matched import match_k
from factdebate.bench.running.runner import run_bench
from factdebate.bench.running.suite_runs import run_suite
from factdebate.cli import app
from factdebate.datasets import DatasetError
from factdebate.tools.core.errors import SettingsError
from tests.bench.test_runner import make_data


def test_each_paper_method_brings_its_baselines_and_a_vote_that_reads_the_same_input() -> None:
    tool_mad = plan_suite("debate-vs-vote", "tool-mad", "fever-mini")
    assert tool_mad.baselines == ("cot", "react", "mad", "madke")
    assert tool_mad.matched == "self-consistency"  # RAG-CoT samples: the debaters' evidence
    assert tool_mad.members[0] == "tool-mad" and tool_mad.members[-1] == "self-consistency"
    madam = plan_suite("debate-vs-vote", "madam-rag", "ramdocs")
    assert set(madam.baselines) == {"madam-no-rag", "madam-concat-rag", "madam-self-reflect"}
    assert madam.matched == "self-consistency-qa"
    debate_cv = plan_suite("debate-vs-vote", "debate-cv", "fever-mini")
    assert debate_cv.baselines == ("rag-cot", "majority", "cooperation")


def test_suite_refuses_what_it_cannot_compare() -> None:
    with pytest.raises(SettingsError, match="unknown suite"):
        plan_suite("debate-vs-everything", "tool-mad", "fever-mini")
    with pytest.raises(SettingsError, match="use one of .*tool-mad"):
        plan_suite("debate-vs-vote", "cot", "fever-mini")
    with pytest.raises(SettingsError, match="not self-consistency"):
        plan_suite("debate-vs-vote", "self-consistency", "fever-mini")
    with pytest.raises(DatasetError, match="takes questions"):
        plan_suite("debate-vs-vote", "madam-rag", "fever-mini")
    plan = plan_suite("debate-vs-vote", "tool-mad", "fever-mini")
    check_shared_settings(plan, {"model": "local", "temperature": 0.2})
    with pytest.raises(SettingsError, match="--set tool_a: cot has no such setting"):
        check_shared_settings(plan, {"tool_a": "search"})


def test_suite_runs_the_debate_first_and_matches_the_vote_to_it(tmp_path: Path, scripted) -> None:
    data = make_data(tmp_path / "data", "SSRN")
    name, model = scripted([], default="Reasons.\n**SUPPORTS**")
    ran: list[tuple[str, dict[str, Any]]] = []

    def run(method: str, folder: Path, settings: dict[str, Any]) -> None:
        ran.append((method, settings))
        run_bench(
            method,
            "fever-mini",
            folder,
            data_dir=data,
            limit=None,
            seed=0,
            concurrency=2,
            context=settings,
        )

    def match(method: str, debate: Path, folder: Path, settings: dict[str, Any]) -> int:
        return int(match_k(method, debate, "calls", folder, settings)["k"])

    plan = SuitePlan("mad", ("cot",), "self-consistency-cot")
    folders = run_suite(plan, tmp_path / "suite", {"model": name}, run, match)
    assert [m for m, _ in ran] == ["mad", "cot", "self-consistency-cot"]
    debate_calls = json.loads((folders[0] / "metrics.json").read_text())["cost"]["per_item"]
    k = json.loads((folders[2] / "match.json").read_text())["k"]
    assert ran[2][1] == {"model": name, "k": k}
    assert abs(k - debate_calls["llm_calls"]) <= 0.5  # within half a call of the debate's mean
    table = write_comparison(tmp_path / "suite", folders)
    assert (tmp_path / "suite" / COMPARISON).read_text() == table
    for method in plan.members:
        assert f"| {method} | {method} | fever-mini | 4 |" in table
    assert "| mad | self-consistency-cot | 4 |" in table  # the paired test of that pair
    page = (tmp_path / "suite" / COMPARISON_PAGE).read_text()
    assert "self-consistency-cot" in page and "<img" in page


def test_cli_suite_refusals_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    cases = [
        (["--suite", "nope"], "unknown suite 'nope'"),
        (["--suite", "debate-vs-vote", "--method", "cot"], "compares a paper's method"),
        (["--suite", "debate-vs-vote", "--set", "tool_a=search"], "cot has no such setting"),
        (["--suite", "debate-vs-vote", "--review"], "--suite runs its own members"),
    ]
    for args, message in cases:
        result = runner.invoke(
            app, ["bench", "--dataset", "fever-mini", "--out", str(tmp_path / "s"), *args]
        )
        assert result.exit_code == 2, result.output
        assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_a_suite_with_a_bad_option_makes_no_model_call(tmp_path: Path) -> None:
    from tests.fake_provider import fake_provider

    data = make_data(tmp_path / "data", "SR")
    runner = CliRunner()
    with fake_provider(lambda prompt, body: "Reasons.\n**SUPPORTS**") as provider:
        base = ["bench", "--dataset", "fever-mini", "--model", provider.model()]
        plain = runner.invoke(
            app, [*base, "--data-dir", str(data), "--method", "cot", "--out", str(tmp_path / "c")]
        )
        assert plain.exit_code == 0, plain.output
        assert provider.requests  # the provider counts what a run calls
        provider.requests.clear()
        suite = ["--suite", "debate-vs-vote", "--method", "tool-mad", "--out", str(tmp_path / "s")]
        cases = [
            (["--data-dir", str(data), "--match-on", "bogus"], "--match-on must be calls or"),
            (["--data-dir", str(data), "--repeats", "2", "--set", "sampling_seed=3"],
             "sets sampling_seed itself"),
            (["--data-dir", str(tmp_path / "nowhere")], "not found"),
        ]  # fmt: skip
        for args, message in cases:
            result = runner.invoke(app, [*base, *suite, *args])
            assert result.exit_code == 2, result.output
            assert message in result.output and len(result.output.strip().splitlines()) == 1
            assert provider.requests == []  # refused before the first model call
            assert not (tmp_path / "s").exists()
