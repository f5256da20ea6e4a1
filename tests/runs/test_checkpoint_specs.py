"""Checkpoint specs without a database: what is accepted, refused, and never printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from factdebate.runs.checkpoints import (
    CONNECT_TIMEOUT_S,
    MAX_SPEC_CHARS,
    check_checkpoint,
    is_postgres,
    open_checkpointer,
    postgres_conninfo,
    shown,
)


def test_password_is_masked_in_every_message() -> None:
    assert shown("postgresql://me:s3cret@db:5432/x") == "postgresql://me:[redacted]@db:5432/x"
    assert shown("postgres://me:p@ss]w#rd@db/x") == "postgres://me:[redacted]@db/x"
    with pytest.raises(ValueError) as info:
        check_checkpoint("postgresql://me:s3cret@db/x?bogus=1")
    assert "s3cret" not in str(info.value) and "bogus" in str(info.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mysql://me@db/x", "expected sqlite:PATH or postgresql://"),
        ("postgresql:///x", "names no host"),
        ("postgresql://me@db/x?bogus=1", "invalid URI query parameter"),
        ("sqlite:", "expected sqlite:PATH"),
        ("postgresql://db/" + "x" * MAX_SPEC_CHARS, "at most"),
    ],
)
def test_bad_specs_are_refused_before_connecting(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_checkpointer(spec)


def test_a_connect_timeout_is_added_unless_given() -> None:
    assert is_postgres("postgres://me@db/x") and not is_postgres("sqlite:x.db")
    assert f"connect_timeout={CONNECT_TIMEOUT_S}" in postgres_conninfo("postgresql://me@db/x")
    given = "postgresql://me@db/x?connect_timeout=3"
    assert "connect_timeout=3" in postgres_conninfo(given)
    assert f"connect_timeout={CONNECT_TIMEOUT_S}" not in postgres_conninfo(given)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    other.write_text("hello")
    with pytest.raises(ValueError, match="not a SQLite database"):
        check_checkpoint(f"sqlite:{other}")
    check_checkpoint(f"sqlite:{tmp_path / 'new.db'}")  # a new file is fine


def test_bench_refuses_a_checkpoint_with_a_server_and_a_bad_spec(tmp_path: Path) -> None:
    from factdebate.cli import app

    runner = CliRunner()
    base = ["bench", "--method", "cot", "--dataset", "fever-mini", "--out", str(tmp_path / "r")]
    both = runner.invoke(
        app, [*base, "--checkpoint", "postgresql://me@db/x", "--server", "http://127.0.0.1:9"]
    )
    assert both.exit_code != 0 and "a server keeps its own threads" in both.stderr
    bad = runner.invoke(app, [*base, "--checkpoint", "mysql://me:pw@db/x"])
    assert bad.exit_code != 0 and "expected sqlite:PATH or postgresql://" in bad.stderr
    assert "Traceback" not in bad.stderr + both.stderr
    assert not (tmp_path / "r").exists()
