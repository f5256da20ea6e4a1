"""`factdebate bench`: a report written and echoed, runs compared, mismatches named in one line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app

runner = CliRunner()


def test_bench_command_writes_report_and_compares(tmp_path: Path, data_home, scripted):
    from factdebate.datasets import datasets_root

    if not (datasets_root("fever") / "fever").exists():
        pytest.skip(f"benchmark data not found at {datasets_root('fever')}")
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = tmp_path / "run"
    args = [
        "bench",
        "--method",
        "cot",
        "--dataset",
        "fever-mini",
        "--limit",
        "4",
        "--model",
        name,
        "--out",
        str(run),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert {"results.jsonl", "metrics.json", "report.md"} <= {p.name for p in run.iterdir()}
    assert len((run / "results.jsonl").read_text().splitlines()) == 4
    # the report is echoed unwrapped (CliRunner is no terminal): each table line stays whole
    report = (run / "report.md").read_text()
    assert max(map(len, report.splitlines())) > 80
    assert all(line in result.output for line in report.splitlines() if line.startswith("|"))
    compared = runner.invoke(app, ["bench", "--compare", str(run), str(run)])
    assert compared.exit_code == 0 and "run" in compared.output
    bad = runner.invoke(app, ["bench", "--dataset", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "nope" in bad.output and "Traceback" not in bad.output


def test_cli_bench_names_the_mismatch(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from factdebate.cli import app

    result = CliRunner().invoke(
        app, ["bench", "--method", "cot", "--dataset", "ramdocs", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "cot takes claims but ramdocs holds questions" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--repeats", "0"], "--repeats must be within 1..50, got 0"),
        (["--repeats", "51"], "--repeats must be within 1..50, got 51"),
        (["--repeats", "2", "--review"], "--repeats makes several runs"),
    ],
)
def test_cli_bench_refuses_bad_repeats(tmp_path: Path, extra: list[str], message: str) -> None:
    args = ["bench", "--method", "cot", "--dataset", "fever-mini", "--out", str(tmp_path / "x")]
    result = runner.invoke(app, [*args, *extra])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in result.output and not (tmp_path / "x").exists()


def test_cli_bench_repeats_writes_combined_report(
    tmp_path: Path, scripted: Callable[..., tuple[str, Any]]
) -> None:
    from tests.bench.test_runner import make_data

    data = make_data(tmp_path / "data", "SR")
    name, model = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = tmp_path / "run"
    args = ["bench", "--method", "cot", "--dataset", "fever-mini", "--data-dir", str(data)]
    result = runner.invoke(app, [*args, "--model", name, "--repeats", "3", "--out", str(run)])
    assert result.exit_code == 0, result.output
    assert len(model.prompts) == 6 and (run / "repeat-3" / "results.jsonl").is_file()
    assert "Repeats: 3 runs of the same 2 items" in result.output
    assert "note: temperature 0" in result.output  # the same answers every repeat, said once
