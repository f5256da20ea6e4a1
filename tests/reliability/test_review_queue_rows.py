"""The bench review queue never rewrites results.jsonl under a running bench or past a bad line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from factdebate.cli import app


@pytest.fixture
def review_run(tmp_path: Path, scripted) -> Path:
    """A finished `bench --review` run of two items, both waiting for a reviewer."""
    from tests.bench.test_review_queue import review_bench

    run, _ = review_bench(tmp_path, scripted)
    return run


def _ids(run: Path) -> list[str]:
    from factdebate.bench import read_results

    return [str(r["id"]) for r in read_results(run / "results.jsonl")]


def test_review_refuses_while_a_bench_still_writes_the_rows(review_run: Path):
    from factdebate.bench.running.review_queue import apply_decision, pending_items
    from factdebate.runs.folder import RowsBusyError, append_rows

    results = review_run / "results.jsonl"
    first = _ids(review_run)[0]
    before = results.read_bytes()
    with append_rows(results):  # what a running bench holds while it appends rows
        with pytest.raises(RowsBusyError, match="being written by another process"):
            pending_items(review_run)
        with pytest.raises(RowsBusyError):
            apply_decision(review_run, first, {"approve": True})
    assert results.read_bytes() == before
    assert apply_decision(review_run, first, {"approve": True})["review"]["status"] == "approved"


@pytest.mark.parametrize(
    "bad",
    ['{"id": "half", "claim": "cut off mid-wri', "not json at all\n", '["no", "id"]\n'],
    ids=["truncated-last-line", "malformed-line", "row-without-id"],
)
def test_review_keeps_a_line_it_cannot_read(review_run: Path, bad: str):
    from factdebate.bench.running.review_queue import QueueError, apply_decision

    results = review_run / "results.jsonl"
    first = _ids(review_run)[0]
    results.write_text(results.read_text(encoding="utf-8") + bad, encoding="utf-8")
    before = results.read_bytes()
    with pytest.raises(QueueError, match=r"line 3 cannot be read"):
        apply_decision(review_run, first, {"approve": True})
    assert results.read_bytes() == before  # nothing dropped, nothing decided
    out = CliRunner().invoke(app, ["review", str(review_run), "--approve-all"])
    assert out.exit_code == 2, out.output
    assert "line 3 cannot be read" in out.output and "Traceback" not in out.output
    assert results.read_bytes() == before


def test_a_symlinked_results_file_is_one_line(review_run: Path, tmp_path: Path):
    results = review_run / "results.jsonl"
    real = tmp_path / "elsewhere.jsonl"
    real.write_bytes(results.read_bytes())
    results.unlink()
    results.symlink_to(real)
    out = CliRunner().invoke(app, ["review", str(review_run), "--approve-all"])
    assert out.exit_code == 2, out.output
    assert "is a symlink" in out.output and "Traceback" not in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
