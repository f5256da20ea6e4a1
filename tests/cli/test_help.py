"""Help and entry points: every command's help with examples, `methods`, `python -m`, reference."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.graphs.registry import METHODS
from factdebate.settings import budget_names
from tests.bounded import run_bounded
from tests.conftest import REPO

runner = CliRunner()
WIDE = {"COLUMNS": "200"}  # rich wraps help text to the terminal width


@pytest.mark.parametrize("command", ["verify", "bench"])
def test_help_names_the_budget_settings_and_the_settings_command(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env=WIDE)
    assert result.exit_code == 0
    names = budget_names()
    assert {"max_llm_calls", "max_total_tokens", "max_usd"} <= set(names)
    assert all(name in result.output for name in names)
    assert "factdebate settings METHOD" in result.output


def test_methods_listing_points_to_the_settings_command() -> None:
    result = runner.invoke(app, ["methods"], env=WIDE)
    assert result.exit_code == 0
    assert all(f"{name} (" in result.output for name in METHODS)
    assert result.output.rstrip().endswith("factdebate settings METHOD")


def test_python_dash_m_runs_the_same_command_with_every_subcommand() -> None:
    """`python -m factdebate.cli` (as the reliability tests call it) keeps the review commands."""
    run = [sys.executable, "-m", "factdebate.cli"]
    helped = run_bounded([*run, "--help"], what="factdebate --help", cwd=REPO, capture_output=True)
    assert helped.returncode == 0, helped.stderr.decode()[-2000:]
    assert all(name in helped.stdout.decode() for name in ("settings", "review", "replay"))
    refused = run_bounded(
        [*run, "verify", "A claim", "--rounds", "0"],
        what="a refusal",
        cwd=REPO,
        capture_output=True,
    )
    assert refused.returncode == 2
    assert "--rounds must be within 1..20, got 0" in refused.stderr.decode()


def test_cli_reference_generator_covers_every_command() -> None:
    import importlib.util

    import typer.main

    spec = importlib.util.spec_from_file_location("gen_cli", REPO / "docs" / "gen_cli.py")
    assert spec is not None and spec.loader is not None
    gen_cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_cli)
    text = gen_cli.reference()
    for name in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        assert f"## `factdebate {name}`" in text
    assert "Usage: factdebate settings [OPTIONS] {method}" in text
    assert "max_llm_calls" in text and "factdebate settings" in text


def test_help_lists_methods_and_datasets_with_examples():
    for command in ("verify", "bench"):
        shown = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        assert "mad-fact" in shown.replace("\n", "") or command == "bench"
        assert "madam-rag" in shown and "Example:" in shown
    assert "fever-mini" in runner.invoke(app, ["bench", "--help"], env={"COLUMNS": "200"}).output
    for command in ("index", "bench-retrieval", "score-answer", "syndec", "methods"):
        assert "Example:" in runner.invoke(app, [command, "--help"]).output, command


def test_methods_listing_keeps_one_line_per_method_when_piped() -> None:
    """At 80 columns (a pipe's default) each method is still one line, never wrapped."""
    result = runner.invoke(app, ["methods"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = result.output.rstrip("\n").splitlines()
    assert len(lines) == len(METHODS) + 1
    for line, (name, spec) in zip(lines, METHODS.items(), strict=False):
        assert line == f"{name} ({spec.input_kind}): {spec.description}"


@pytest.mark.parametrize("columns", ["60", "80", "140"])
def test_help_wraps_whole_paragraphs_and_shows_no_type_for_flags(columns: str) -> None:
    """`index --help` rewraps its docstring at any width; `verify --help` flags have no type."""
    shown = runner.invoke(app, ["index", "--help"], env={"COLUMNS": columns, "NO_COLOR": "1"})
    assert shown.exit_code == 0
    text = " ".join(shown.output.split())  # the words, whatever the wrapping
    assert "the live index is replaced only when the new one is complete." in text
    lines = [line.strip() for line in shown.output.splitlines()]
    assert "replaced" not in lines and "again (docs/corpus.md)." not in lines  # no short orphans
    wide = {"COLUMNS": "200", "NO_COLOR": "1"}
    verify = runner.invoke(app, ["verify", "--help"], env=wide).output
    for flag in ("--review", "--approve", "--help"):
        row = next(line for line in verify.splitlines() if f"{flag} " in line)
        assert "<bool>" not in row, row
    assert "<str>" in verify  # options taking a value keep their type
