"""Read a corpus as a stream: JSONL(.gz), Parquet, FEVER wiki-pages, KILT, text folders."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import zlib
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from factdebate.tools.core.env import env_int
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.json_text import json_problem, parse_json
from factdebate.tools.core.records import Evidence

DEFAULT_COLLECTION = "default"
MAX_BYTES = 2 * 1024**3  # largest whole text file read (.txt/.md)
MAX_LINE = 16 * 1024**2  # longest JSONL record read
MAX_DOC_CHARS = 1_000_000
"""Longest document text indexed or given, in characters (~950 passages of 1,200): a longer
record is left out as a bad record, with its length in the reason, never cut silently."""
MAX_DOC_ENV = "FACTDEBATE_MAX_DOC_CHARS"
DOC_CHARS_RANGE = (1_000, 100_000_000)
PARQUET_BATCH = 1024  # rows read from a Parquet file at a time
FORMATS = ("auto", "jsonl", "parquet", "fever", "kilt", "text")
_SHARDS = (".jsonl", ".jsonl.gz", ".json.gz", ".ndjson", ".parquet")

Problem = Callable[[str], None]


class CorpusError(FactDebateError, ValueError):
    """A corpus path or record that cannot be read."""


def default_corpus_path() -> Path:
    """The small encyclopedic corpus shipped with the package."""
    return Path(str(resources.files("factdebate") / "data" / "default_corpus.jsonl"))


def max_document_chars() -> int:
    """The longest document text accepted: ``FACTDEBATE_MAX_DOC_CHARS``, else ``MAX_DOC_CHARS``.

    Raises:
        SettingsError: a value that is not a whole number within ``DOC_CHARS_RANGE``.
    """
    return env_int(MAX_DOC_ENV, MAX_DOC_CHARS, *DOC_CHARS_RANGE)


def _too_long(chars: int, limit: int) -> str:
    return (
        f"text is {chars:,} characters; the limit is {limit:,} ({MAX_DOC_ENV}): "
        "split the document into several records"
    )


def _evidence(ident: str, title: str, text: str) -> Evidence:
    return Evidence(id=ident, title=title, text=text, source="", score=0.0)


def shards(path: Path) -> list[Path]:
    """The files a corpus path stands for: itself, or a folder's data shards in name order.

    Raises:
        CorpusError: a missing path, or a special file (a device, a pipe).
    """
    if not path.exists():
        raise CorpusError(f"no such file or folder: {path}")
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and _is_shard(p))
        return found or sorted(
            p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in {".txt", ".md"}
        )
    if not path.is_file():
        raise CorpusError(f"{path} is not a regular file")
    return [path]


def _is_shard(path: Path) -> bool:
    return path.name.lower().endswith(_SHARDS)


def _open_text(file: Path) -> io.BufferedIOBase:
    if file.name.lower().endswith(".gz"):
        return gzip.GzipFile(file, "rb")
    return file.open("rb")


def _damaged(file: Path, offset: int, exc: BaseException) -> CorpusError:
    """The one-line error of a gzip shard that ends early or is damaged at ``offset``."""
    why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return CorpusError(
        f"{file}: the gzip data is cut short or damaged after {offset} bytes of text "
        f"({file.stat().st_size} bytes on disk): {why}; copy or download it again"
    )


_GZIP_FAULTS = (EOFError, gzip.BadGzipFile, zlib.error)


def _unicode_problem(doc: Evidence) -> str | None:
    """Why a document's id, title or text cannot be stored as UTF-8 (a lone surrogate), or None."""
    for field, value in (("id", doc["id"]), ("title", doc["title"]), ("text", doc["text"])):
        if value.isascii():
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(value[exc.start])
            return f"{field} holds a lone surrogate U+{code:04X} at character {exc.start}"
    return None


def _first_record(file: Path) -> dict[str, Any] | None:
    """The first JSON object of a JSONL(.gz) shard, or None."""
    try:
        with _open_text(file) as handle:
            for raw in iter(lambda: handle.readline(MAX_LINE), b""):
                if raw.strip():
                    record = parse_json(raw)
                    return record if isinstance(record, dict) else None
    except (OSError, ValueError, EOFError):
        return None
    return None


def detect_format(path: Path) -> str:
    """Name the format of a corpus path from its files and its first record.

    FEVER wiki-pages records carry ``lines``; KILT records carry ``wikipedia_id`` and a list
    ``text``; other JSON records are plain ``id``/``title``/``text``.
    """
    files = shards(path)
    if not files:
        raise CorpusError(f"no documents found in {path}")
    first = files[0]
    if first.suffix.lower() == ".parquet":
        return "parquet"
    if first.suffix.lower() in {".txt", ".md"}:
        return "text"
    record = _first_record(first) or {}
    if "lines" in record and "id" in record:
        return "fever"
    if "wikipedia_id" in record and isinstance(record.get("text"), list):
        return "kilt"
    return "jsonl"


def iter_documents(
    path: Path, fmt: str = "auto", problem: Problem | None = None
) -> Iterator[Evidence]:
    """Stream the documents of ``path`` one at a time, in a stable order (resumes rely on it).

    Args:
        path: A file or a folder of shards (``.jsonl``, ``.jsonl.gz``, ``.parquet``; FEVER's
            ``wiki-pages/``; or ``.txt``/``.md`` files, one document each).
        fmt: One of ``FORMATS``; ``auto`` looks at the first shard.
        problem: Called with ``FILE:LINE: problem`` for each bad record, which is left out;
            without it the first bad record raises.

    Raises:
        CorpusError: a bad path or format, or a bad record when ``problem`` is None.
    """
    if fmt not in FORMATS:
        raise CorpusError(f"unknown corpus format {fmt!r}: expected one of {', '.join(FORMATS)}")
    kind = detect_format(path) if fmt == "auto" else fmt
    files = shards(path)

    def report(where: str, what: str) -> None:
        if problem is None:
            raise CorpusError(f"{where}: {what}")
        problem(f"{where}: {what}")

    seen: set[int] = set()  # 8-byte digests of ids: bounded by the number of documents
    limit = max_document_chars()
    for file in files:
        records = _READERS[kind](path, file)
        for where, doc in records:
            if isinstance(doc, str):
                report(where, doc)
                continue
            surrogate = _unicode_problem(doc)
            if surrogate is not None:  # JSON's \ud800 escape: text no encoder or file can hold
                report(where, surrogate)
                continue
            if len(doc["text"]) > limit:  # one record must not become thousands of passages
                report(where, _too_long(len(doc["text"]), limit))
                continue
            key = int.from_bytes(hashlib.blake2b(doc["id"].encode(), digest_size=8).digest())
            if key in seen:
                report(where, f"duplicate document id {doc['id']!r}")
                continue
            seen.add(key)
            yield doc


Records = Iterator[tuple[str, Evidence | str]]


def _json_lines(file: Path) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """``(FILE:LINE, object)`` of a JSONL(.gz) file; a bad line gives its problem instead."""
    with _open_text(file) as handle:
        number = offset = 0
        while True:
            try:
                raw = handle.readline(MAX_LINE + 1)
            except _GZIP_FAULTS as exc:
                raise _damaged(file, offset, exc) from exc
            if not raw:
                return
            offset += len(raw)
            number += 1
            where = f"{file}:{number}"
            if len(raw) > MAX_LINE:
                while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
                    try:
                        raw = handle.readline(MAX_LINE)
                    except _GZIP_FAULTS as exc:
                        raise _damaged(file, offset, exc) from exc
                    offset += len(raw)
                yield where, f"record longer than {MAX_LINE} bytes"
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield where, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
                continue
            if not line.strip():
                continue
            try:
                record = parse_json(line)
            except json.JSONDecodeError as exc:
                yield where, f"not JSON ({json_problem(exc, line=False)})"
                continue
            if not isinstance(record, dict):
                yield where, "expected a JSON object"
                continue
            yield where, record


def _plain(where: str, record: dict[str, Any]) -> Evidence | str:
    ident, text, title = record.get("id"), record.get("text"), record.get("title", "")
    if not isinstance(ident, str | int) or isinstance(ident, bool) or not str(ident).strip():
        return "missing or empty id (a string or an integer)"
    if not isinstance(text, str) or not text.strip():
        return "missing or empty text (a string)"
    if not isinstance(title, str | None):
        return "title must be a string"
    return _evidence(str(ident).strip(), title or "", text.strip())


def _read_jsonl(root: Path, file: Path) -> Records:
    for where, record in _json_lines(file):
        yield where, record if isinstance(record, str) else _plain(where, record)


_BRACKETS = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
    "-COLON-": ":",
}
# FEVER's sentences are tokenized Penn-Treebank style: a space before punctuation and closing
# brackets, after opening ones, before contractions, and `` '' for double quotes.
_SPACED = [
    (re.compile(r"``\s*"), '"'),
    (re.compile(r"\s*''"), '"'),
    (re.compile(r"([(\[{])\s+"), r"\1"),
    (re.compile(r"\s+([)\]},.;!?%])"), r"\1"),
    (re.compile(r"\s+:(?!\s*\d)"), ":"),  # not in a ratio or a time (3 : 2)
    (re.compile(r"\s+(n't|'s|'re|'ve|'ll|'d|'m)\b", re.IGNORECASE), r"\1"),
]


def fever_title(page: str) -> str:
    """A FEVER page id as a title: underscores to spaces, -LRB-/-RRB- tokens to brackets."""
    for token, char in _BRACKETS.items():
        page = page.replace(token, char)
    return page.replace("_", " ")


def fever_text(sentence: str) -> str:
    """A FEVER ``wiki-pages`` sentence as plain text: brackets, quotes and spacing restored.

    ``Santana , 1947 -RRB- .`` reads ``Santana, 1947).``; what models and pages are shown is
    the restored text (the dump's tokens are not words a model should quote).
    """
    for token, char in _BRACKETS.items():
        sentence = sentence.replace(token, char)
    for pattern, replacement in _SPACED:
        sentence = pattern.sub(replacement, sentence)
    return " ".join(sentence.split())


def _read_fever(root: Path, file: Path) -> Records:
    """FEVER ``wiki-pages``: one document a page, its sentences one a line (links dropped).

    The dump's escapes are restored (``fever_text``): ``-LRB-`` reads ``(``, and so on.
    """
    for where, record in _json_lines(file):
        if isinstance(record, str):
            yield where, record
            continue
        page, lines = record.get("id"), record.get("lines")
        if not isinstance(page, str) or not isinstance(lines, str):
            yield where, "a FEVER page needs a string id and a string lines"
            continue
        if not page.strip():
            continue  # the dump's first record is an empty page
        sentences = []
        for line in lines.split("\n"):
            parts = line.split("\t")
            if len(parts) > 1 and parts[1].strip():
                sentences.append(fever_text(parts[1]))
        if sentences:  # disambiguation and empty pages have none
            yield where, _evidence(page, fever_title(page), "\n".join(sentences))


def _read_kilt(root: Path, file: Path) -> Records:
    """KILT knowledge source: paragraphs joined; section headings and bullet marks dropped."""
    for where, record in _json_lines(file):
        if isinstance(record, str):
            yield where, record
            continue
        ident, title, text = (
            record.get("wikipedia_id"),
            record.get("wikipedia_title", ""),
            record.get("text"),
        )
        if not isinstance(ident, str | int) or not str(ident).strip():
            yield where, "a KILT page needs a wikipedia_id"
            continue
        if not isinstance(text, list) or not all(isinstance(p, str) for p in text):
            yield where, "a KILT page's text must be a list of paragraphs"
            continue
        first = 1 if text and text[0].strip() == str(title or "").strip() else 0
        paragraphs = [
            p.replace("BULLET::::", "").strip()
            for p in text[first:]
            if p.strip() and not p.startswith("Section::::")
        ]
        if paragraphs:
            yield where, _evidence(str(ident), str(title or ""), "\n\n".join(paragraphs))


def _read_parquet(root: Path, file: Path) -> Records:
    """Parquet with ``id``, ``text`` and optional ``title`` columns, read in row batches."""
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(file)
    except Exception as exc:  # pyarrow raises its own error types for a bad file
        raise CorpusError(f"{file}: not a Parquet file ({type(exc).__name__})") from exc
    names = set(table.schema_arrow.names)
    if not {"id", "text"} <= names:
        raise CorpusError(f"{file}: a Parquet corpus needs id and text columns")
    columns = [c for c in ("id", "title", "text") if c in names]
    row = 0
    for batch in table.iter_batches(batch_size=PARQUET_BATCH, columns=columns):
        for record in batch.to_pylist():
            row += 1
            yield f"{file}:row {row}", _plain(f"{file}:row {row}", record)


def _read_text(root: Path, file: Path) -> Records:
    """One ``.txt``/``.md`` file as one document, id its path under the folder."""
    size, limit = file.stat().st_size, max_document_chars()
    if size > MAX_BYTES or size > 4 * limit:  # UTF-8: at least size / 4 characters, never read
        yield str(file), f"{size:,} bytes, over the limit of {limit:,} characters ({MAX_DOC_ENV})"
        return
    try:
        text = file.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        yield str(file), f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        return
    if text:
        ident = str(file.relative_to(root)) if root.is_dir() else file.name
        yield str(file), _evidence(ident, file.stem, text)


def count_records(path: Path, fmt: str = "auto") -> int:
    """How many records ``path`` holds (lines, rows or files): a progress bar's total.

    One quick pass over the bytes (gzip shards are decompressed); bad and empty records count
    too, so the figure is an upper bound on the documents.
    """
    kind = detect_format(path) if fmt == "auto" else fmt
    return sum(_count_file(file, kind) for file in shards(path))


def _count_file(file: Path, kind: str) -> int:
    """The records of one shard; an unreadable, damaged or mismatched file says so in one line."""
    if kind == "text":
        return 1
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(file).metadata.num_rows)
        except Exception as exc:  # pyarrow raises its own error types for a bad file
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CorpusError(f"{file}: not a Parquet file ({why})") from exc
    total = read = 0
    try:
        with _open_text(file) as handle:
            for block in iter(lambda: handle.read1(1 << 20), b""):  # read1: an offset to tell
                total += block.count(b"\n")
                read += len(block)
    except _GZIP_FAULTS as exc:
        raise _damaged(file, read, exc) from exc
    except OSError as exc:  # unreadable: said in one line
        raise CorpusError(f"{file}: {exc}") from exc
    return total


_READERS: dict[str, Callable[[Path, Path], Records]] = {
    "jsonl": _read_jsonl,
    "fever": _read_fever,
    "kilt": _read_kilt,
    "parquet": _read_parquet,
    "text": _read_text,
}


def load_documents(
    path: Path, skipped: list[str] | None = None, fmt: str = "auto"
) -> list[Evidence]:
    """Every document of ``path`` in a list (small corpora; large ones go through the stream).

    Args:
        path: A corpus file or folder in any of ``FORMATS``.
        skipped: When given, bad records (invalid UTF-8, malformed JSON, missing or non-text
            id/text, duplicate ids) are left out and described here as ``FILE:LINE: problem``;
            otherwise the first one raises.
        fmt: The corpus format, ``auto`` to detect it.

    Raises:
        CorpusError: missing or non-regular path; a bad record (unless ``skipped`` is given);
            no documents at all.
    """
    docs = list(iter_documents(path, fmt, None if skipped is None else skipped.append))
    if not docs:
        why = f": every record was bad, e.g. {'; '.join(skipped[:3])}" if skipped else ""
        raise CorpusError(f"no documents found in {path}{why}")  # FILE:LINE reasons, first few
    return docs
