"""The debate-vs-vote suite with the escalation member, end to end on fever-mini."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from factdebate.bench.judging.suite import COMPARISON_PAGE, plan_suite, write_comparison
from factdebate.bench.running.matched import match_k
from factdebate.bench.running.runner import run_bench
from factdebate.bench.running.suite_runs import run_suite
from factdebate.cli import app
from tests.bench.test_runner import make_data


def test_each_debate_with_an_escalation_brings_it_into_the_suite() -> None:
    tool_mad = plan_suite("debate-vs-vote", "tool-mad", "fever-mini")
    assert tool_mad.escalation == "escalate-tool-mad"
    assert tool_mad.members[:2] == ("tool-mad", "escalate-tool-mad")
    assert tool_mad.members[-1] == "self-consistency"
    assert plan_suite("debate-vs-vote", "debate-cv", "fever-mini").escalation == (
        "escalate-debate-cv"
    )
    assert plan_suite("debate-vs-vote", "madam-rag", "ramdocs").escalation == ""


def test_the_suite_runs_the_escalation_and_compares_it(tmp_path: Path, scripted, fake_tools):
    data = make_data(tmp_path / "data", "SSRN")
    name, _ = scripted([], default="Reasons.\n**SUPPORTS**")

    def run(method: str, folder: Path, settings: dict[str, Any]) -> None:
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

    plan = plan_suite("debate-vs-vote", "tool-mad", "fever-mini")
    plan = type(plan)(plan.method, (), plan.matched, plan.escalation)  # no baselines: faster
    folders = run_suite(plan, tmp_path / "suite", {"model": name, "max_rounds": 1}, run, match)
    assert [f.name for f in folders] == ["tool-mad", "escalate-tool-mad", "self-consistency"]
    report = (folders[1] / "report.md").read_text()
    assert "## Screen (escalation)" in report
    assert "Screen reasons (4 items): agreed 4." in report
    assert "| settled by the screen | 4 | 2/4 |" in report and "| escalated | 0 | - |" in report
    table = write_comparison(tmp_path / "suite", folders)
    assert "| escalate-tool-mad | escalate-tool-mad | fever-mini | 4 |" in table
    page = (tmp_path / "suite" / COMPARISON_PAGE).read_text()
    assert "escalate-tool-mad" in page and "<img" in page


def test_the_suite_estimate_lists_the_escalation_member() -> None:
    done = CliRunner().invoke(
        app,
        ["bench", "--estimate", "--suite", "debate-vs-vote", "--method", "tool-mad",
         "--dataset", "fever-mini", "--limit", "10"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "escalate-tool-mad" in done.output and "upper bound" in done.output
