"""Every help screen, the root's and every command's and sub-command's, ends with an example."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from factdebate.cli import app

runner = CliRunner()


def commands(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command under ``cmd`` (itself first)."""
    yield path
    if hasattr(cmd, "list_commands"):  # a group (Typer's own copy of click's)
        ctx = cmd.context_class(cmd)
        for name in sorted(cmd.list_commands(ctx)):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from commands(sub, (*path, name))


ALL = list(commands(typer.main.get_command(app)))


def test_the_walk_finds_the_commands_and_their_groups() -> None:
    assert {(), ("verify",), ("bench",), ("datasets",)} <= set(ALL) and len(ALL) > 20


@pytest.mark.parametrize("path", ALL, ids=lambda p: " ".join(p) or "factdebate")
def test_help_ends_with_an_example(path: tuple[str, ...]) -> None:
    shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    lines = [line.strip() for line in shown.output.splitlines() if line.strip()]
    assert lines[-1].startswith(("Example: factdebate", "Examples: factdebate")), lines[-3:]
