"""`factdebate index`: JSONL files and folders indexed for both engines, bad lines named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app

runner = CliRunner()


def test_index_jsonl_and_folder(tmp_path: Path, data_home):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "1", "title": "Moon", "text": "The Moon orbits Earth."}\n'
        '{"id": "2", "title": "Sun", "text": "The Sun is a star."}\n'
    )
    result = runner.invoke(app, ["index", str(corpus), "--collection", "mine"])
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents" in result.output
    assert "into 'mine': 2/2 documents (100%) · elapsed " in result.output  # no terminal: lines
    from factdebate.tools.retrieval.lexical_search import OfflineSearch
    from factdebate.tools.retrieval.vectorstore import dense_search

    assert dense_search("mine", "What orbits the Earth?", 1)[0]["id"] == "1"
    assert OfflineSearch("mine").search("star", 2)[0]["id"] == "2"
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("Water boils at 100 degrees Celsius at sea level.")
    (folder / "b.txt").write_text("")
    result = runner.invoke(app, ["index", str(folder), "--collection", "notes"])
    assert result.exit_code == 0 and "indexed 1 documents" in result.output


def test_index_reports_malformed_line(tmp_path: Path, data_home):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "title": "a", "text": "fine"}\n{"id": 2, "title": \n')
    result = runner.invoke(app, ["index", str(bad)])  # the valid record is indexed
    assert result.exit_code == 0 and f"skipped {bad}:2: not JSON" in result.output
    assert "skipped 1 bad record(s)" in result.output and "indexed 1 documents" in result.output


def test_index_progress_moves_within_the_first_step(
    tmp_path: Path, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`index` reports documents while its first 2,048-passage step is still being embedded."""
    from contextlib import contextmanager
    from types import SimpleNamespace

    import factdebate.cli.index as cli_index
    import factdebate.tools.retrieval.index as index
    from factdebate.tools.retrieval.embeddings import EncoderSpec, requested_encoder

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        "".join(f'{{"id": "{i}", "title": "P{i}", "text": "Fact {i}."}}\n' for i in range(300))
    )
    embed = lambda texts: [[1.0 + len(t) % 3] + [1.0] * 383 for t in texts]  # noqa: E731
    encoder = SimpleNamespace(
        spec=EncoderSpec(requested_encoder()), embeddings=SimpleNamespace(embed_documents=embed)
    )
    monkeypatch.setattr(index, "load_encoder", lambda name="": encoder)
    seen: list[tuple[int, int | None, str]] = []

    @contextmanager
    def recorded(label: str, every: float, unit: str = "items") -> Iterator[Any]:
        yield lambda done, total=None, note="": seen.append((done, total, note))

    monkeypatch.setattr(cli_index, "track_progress", recorded)
    result = runner.invoke(app, ["index", str(corpus), "--collection", "steps"])
    assert result.exit_code == 0, result.output
    assert (128, 300, "128 passages") in seen  # after the first encoder call of 128 texts
    assert seen[-1] == (300, 300, "300 passages")
