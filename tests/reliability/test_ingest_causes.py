"""A failed `index` says its first real cause in one line and leaves no unfinished build."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from factdebate.cli import app
from tests.bounded import assert_prompt

runner = CliRunner()


@pytest.fixture
def quick_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A constant 384-dim encoder in place of MiniLM: these tests are about failures."""
    import factdebate.tools.retrieval.index as index
    from factdebate.tools.retrieval.embeddings import EncoderSpec, requested_encoder

    embed = lambda texts: [[1.0 + len(t) % 3] + [1.0] * 383 for t in texts]  # noqa: E731
    encoder = SimpleNamespace(
        spec=EncoderSpec(requested_encoder()), embeddings=SimpleNamespace(embed_documents=embed)
    )
    monkeypatch.setattr(index, "load_encoder", lambda name="": encoder)


def rows(n: int) -> str:
    return "".join(
        json.dumps({"id": str(i), "title": f"T{i}", "text": f"Fact number {i}."}) + "\n"
        for i in range(n)
    )


def index(*args: str) -> Result:
    return runner.invoke(app, ["index", *args])


def error_lines(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


def leftovers(home: Path, collection: str) -> list[str]:
    """What an unfinished build of ``collection`` could leave: store folders, checkpoint, rows."""
    from factdebate.tools.retrieval.milvus import milvus_client, milvus_uri

    found = [str(p) for p in (home / "bm25").glob(f"{collection}__*")]
    found += [str(p) for p in (home / "builds").glob(f"{collection}.json")]
    names = []
    if (home / "milvus.db").exists():
        names = milvus_client(milvus_uri("")).list_collections()
    return found + [n for n in names if n.startswith(f"{collection}__")]


def parquet_with_integer_text(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["1", "2"], "text": [1, 2]}), path)
    return path


@pytest.mark.usefixtures("quick_encoder")
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("every-record-bad", "all 1 record(s) were bad (listed above)"),
        ("empty-file", "the corpus holds no document with text"),
        ("parquet-integer-text", "all 2 record(s) were bad (listed above)"),
        ("kilt-format-on-plain-jsonl", "were bad (listed above) (is --format kilt right"),
        ("parquet-format-on-jsonl", "c.jsonl: not a Parquet file (Parquet magic bytes"),
    ],
)
def test_a_late_failure_names_its_cause_in_one_line_and_leaves_nothing(
    case: str, expected: str, tmp_path: Path, data_home: Path
) -> None:
    """Every record bad, an empty file, integer text, a wrong --format: one line, no leftovers."""
    args: list[str]
    if case == "every-record-bad":
        (tmp_path / "c.jsonl").write_text('{"doc_id": "1", "text": "x"}\n')
        args = [str(tmp_path / "c.jsonl")]
    elif case == "empty-file":
        (tmp_path / "c.jsonl").write_text("")
        args = [str(tmp_path / "c.jsonl")]
    elif case == "parquet-integer-text":
        args = [str(parquet_with_integer_text(tmp_path / "c.parquet"))]
    else:
        (tmp_path / "c.jsonl").write_text(rows(3))
        fmt = "kilt" if case.startswith("kilt") else "parquet"
        args = [str(tmp_path / "c.jsonl"), "--format", fmt]
    result = index(*args, "--collection", "late")
    assert result.exit_code == 2, result.output
    assert len(error_lines(result)) == 1 and expected in result.output.replace("\n", ""), (
        result.output
    )
    assert "closed file" not in result.output and "Traceback" not in result.output
    assert leftovers(data_home, "late") == []


@pytest.mark.usefixtures("quick_encoder")
def test_a_lone_surrogate_is_one_skipped_record(tmp_path: Path, data_home: Path) -> None:
    """``"\\ud800"`` in one record is listed like any bad record; the others are indexed."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "1", "text": "fine text"}\n{"id": "2", "text": "\\ud800"}\n'
        '{"id": "3", "title": "\\udfff", "text": "more"}\n{"id": "4", "text": "last"}\n'
    )
    result = index(str(corpus), "--collection", "surrogate")
    assert result.exit_code == 0, result.output
    out = result.output.replace("\n", "")
    assert f"skipped {corpus}:2: text holds a lone surrogate U+D800 at character 0" in out
    assert f"skipped {corpus}:3: title holds a lone surrogate U+DFFF" in out
    assert "skipped 2 bad record(s)" in out and "indexed 2 documents" in out


@pytest.mark.usefixtures("quick_encoder")
def test_a_truncated_gzip_names_the_file_and_the_offset(tmp_path: Path, data_home: Path) -> None:
    """A `.gz` cut short is one line with the file and how far it read, not ``Aborted.``."""
    whole = gzip.compress(rows(2000).encode())
    corpus = tmp_path / "c.jsonl.gz"
    corpus.write_bytes(whole[: len(whole) // 2])
    result = index(str(corpus), "--collection", "cut")
    assert result.exit_code == 2, result.output
    assert "Aborted" not in result.output and len(error_lines(result)) == 1
    line = result.output.replace("\n", "")
    assert f"error: {corpus}: the gzip data is cut short or damaged after " in line
    assert f"bytes of text ({len(whole) // 2} bytes on disk)" in line
    assert leftovers(data_home, "cut") == []


def test_the_stream_reader_names_a_truncated_gzip_too(tmp_path: Path) -> None:
    """`iter_documents` (the API's reader) raises the same one-line error, with the offset."""
    from factdebate.tools.retrieval.corpus import CorpusError, iter_documents

    whole = gzip.compress(rows(2000).encode())
    corpus = tmp_path / "c.jsonl.gz"
    corpus.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(CorpusError, match=r"c\.jsonl\.gz: the gzip data is cut short") as caught:
        list(iter_documents(corpus))
    offset = int(str(caught.value).split(" after ")[1].split()[0])
    assert 0 < offset < len(rows(2000))


@pytest.mark.usefixtures("quick_encoder")
def test_milvus_failing_mid_ingest_is_one_line_and_the_build_resumes(
    tmp_path: Path, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Milvus gone mid-build: one line naming it, no traceback; the same command then resumes."""
    from pymilvus.exceptions import MilvusException

    import factdebate.tools.retrieval.index as index_module
    from factdebate.tools.retrieval import milvus
    from factdebate.tools.retrieval.milvus import count_rows

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(rows(5000))  # three steps of 2,048 passages
    real = milvus.insert_rows
    calls = [0]

    def dies_on_the_second_step(*args: Any, **kwargs: Any) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise MilvusException(code=2, message="Fail connecting to server on 127.0.0.1:1")
        real(*args, **kwargs)

    monkeypatch.setattr(index_module, "insert_rows", dies_on_the_second_step)
    monkeypatch.setattr(index_module, "CHECKPOINT_S", 0.0)
    monkeypatch.setattr(
        index_module, "drop_collection", lambda *a, **k: (_ for _ in ()).throw(MilvusException())
    )
    result = index(str(corpus), "--collection", "gone")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(error_lines(result)) == 1
    line = error_lines(result)[0]
    assert f"Milvus Lite at {data_home / 'milvus.db'} failed while indexing 'gone'" in line
    assert "MilvusException" in line and "run the same command again to resume" in line
    monkeypatch.setattr(index_module, "insert_rows", real)
    result = index(str(corpus), "--collection", "gone")
    assert result.exit_code == 0 and "indexed 5000 documents as 5000 passages" in result.output
    from factdebate.tools.retrieval.manifest_store import live_manifest

    assert count_rows(live_manifest("gone").milvus_name) == 5000


def test_a_server_that_goes_away_is_named_without_its_password() -> None:
    """The one line names the server (credentials redacted), the error type and its first line."""
    from pymilvus.exceptions import MilvusException

    from factdebate.tools.retrieval.index import _milvus_failed, from_milvus

    exc = MilvusException(code=2, message="Fail connecting to server\nsecond line")
    assert from_milvus(exc) and not from_milvus(ValueError("x"))
    message = str(_milvus_failed("big", "http://root:Milvus@127.0.0.1:19530", exc))
    assert message.startswith("the Milvus server at http://root:[redacted]@127.0.0.1:19530 ")
    assert "failed while indexing 'big' (MilvusException: " in message and "\n" not in message


@pytest.mark.usefixtures("quick_encoder")
def test_a_ten_megabyte_record_is_left_out_with_its_length(tmp_path: Path, data_home: Path) -> None:
    """One 10 MB record must not become thousands of passages: it is skipped, the rest indexed."""
    import time

    corpus = tmp_path / "c.jsonl"
    huge = {"id": "huge", "title": "Big", "text": "word " * 2_000_000}
    corpus.write_text(json.dumps(huge) + "\n" + rows(2))
    started = time.monotonic()
    result = index(str(corpus), "--collection", "sized")
    assert_prompt(started, "indexing a 10 MB record")
    assert result.exit_code == 0, result.output
    out = result.output.replace("\n", "")
    assert (
        f"skipped {corpus}:1: text is 9,999,999 characters; the limit is 1,000,000 "
        "(FACTDEBATE_MAX_DOC_CHARS): split the document into several records"
    ) in out
    assert "indexed 2 documents as 2 passages" in out


def test_the_document_bound_is_a_setting_and_holds_for_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.tools.retrieval.corpus import CorpusError, load_documents

    monkeypatch.setenv("FACTDEBATE_MAX_DOC_CHARS", "2000")
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "short.txt").write_text("A short page.")
    (folder / "long.md").write_text("x" * 2001)
    (folder / "huge.txt").write_text("y" * 9000)  # over 4 bytes per character: never read
    skipped: list[str] = []
    docs = load_documents(folder, skipped)
    assert [d["id"] for d in docs] == ["short.txt"]
    assert any("long.md: text is 2,001 characters; the limit is 2,000" in s for s in skipped)
    assert any("huge.txt: 9,000 bytes, over the limit of 2,000 characters" in s for s in skipped)
    monkeypatch.setenv("FACTDEBATE_MAX_DOC_CHARS", "lots")
    with pytest.raises(ValueError, match="FACTDEBATE_MAX_DOC_CHARS must be a whole number"):
        load_documents(folder, [])
    monkeypatch.delenv("FACTDEBATE_MAX_DOC_CHARS")
    given = tmp_path / "given.jsonl"
    given.write_text(json.dumps({"id": "1", "text": "z" * 1_000_001}) + "\n")
    with pytest.raises(CorpusError, match="given.jsonl:1: text is 1,000,001 characters"):
        load_documents(given)


@pytest.mark.usefixtures("quick_encoder")
def test_a_control_character_is_named_once_with_its_column(tmp_path: Path, data_home: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "1", "text": "a\x01b"}\n' + rows(1))
    result = index(str(corpus), "--collection", "control")
    assert result.exit_code == 0, result.output
    out = result.output.replace("\n", "")
    assert f"skipped {corpus}:1: not JSON (Invalid control character at column 23)" in out
    assert "at at" not in out
