"""Read documents to index: the bundled default corpus, a JSONL file or a folder of text."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from tools.records import Evidence

DEFAULT_COLLECTION = "default"
MAX_BYTES = 2 * 1024**3  # largest corpus file read


class CorpusError(ValueError):
    """A corpus path or record that cannot be read."""


def data_home() -> Path:
    """Directory holding indexes (``FACTDEBATE_HOME``, else ``~/.cache/factdebate``)."""
    home = os.environ.get("FACTDEBATE_HOME") or Path.home() / ".cache" / "factdebate"
    path = Path(home)
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_corpus_path() -> Path:
    """The small encyclopedic corpus shipped with the package."""
    return Path(str(resources.files("factdebate") / "data" / "default_corpus.jsonl"))


def load_documents(
    path: Path, skipped: list[str] | None = None, max_bytes: int = MAX_BYTES
) -> list[Evidence]:
    """Load ``id``/``title``/``text`` JSONL, or every .txt/.md file under a folder.

    Args:
        path: A JSONL file or a folder.
        skipped: When given, bad records (invalid UTF-8, malformed JSON, missing or non-text
            id/text, duplicate ids) are left out and described here as ``FILE:LINE: problem``;
            otherwise the first one raises.
        max_bytes: Largest file read.

    Raises:
        CorpusError: missing, oversized or non-regular path; a bad record (unless
            ``skipped`` is given); no documents at all.
    """
    if not path.exists():
        raise CorpusError(f"no such file or folder: {path}")
    problems: list[str] = []
    docs: list[Evidence] = []
    seen: set[str] = set()
    records = _iter_folder(path, max_bytes) if path.is_dir() else _iter_jsonl(path, max_bytes)
    for where, doc in records:
        if isinstance(doc, str):
            problems.append(f"{where}: {doc}")
        elif doc["id"] in seen:
            problems.append(f"{where}: duplicate document id {doc['id']!r}")
        else:
            seen.add(doc["id"])
            docs.append(doc)
        if problems and skipped is None:
            raise CorpusError(problems[0])
    if skipped is not None:
        skipped.extend(problems)
    if not docs:
        why = f": every record was bad, e.g. {'; '.join(skipped[:3])}" if skipped else ""
        raise CorpusError(f"no documents found in {path}{why}")  # FILE:LINE reasons, first few
    return docs


def _read(file: Path, max_bytes: int) -> bytes:
    if not file.is_file():
        raise CorpusError(f"{file} is not a regular file")
    if file.stat().st_size > max_bytes:
        raise CorpusError(f"{file} is larger than {max_bytes} bytes")
    return file.read_bytes()


def _iter_jsonl(path: Path, max_bytes: int) -> Iterator[tuple[str, Evidence | str]]:
    """``(FILE:LINE, record)`` of a JSONL file; a bad line gives its problem instead."""
    for number, raw in enumerate(_read(path, max_bytes).split(b"\n"), 1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield where, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            continue
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield where, f"not JSON ({exc.msg} at column {exc.colno})"
            continue
        if not isinstance(record, dict):
            yield where, "expected a JSON object with id, title, text"
            continue
        ident, text, title = record.get("id"), record.get("text"), record.get("title", "")
        if not isinstance(ident, str | int) or isinstance(ident, bool) or not str(ident).strip():
            yield where, "missing or empty id (a string or an integer)"
        elif not isinstance(text, str) or not text.strip():
            yield where, "missing or empty text (a string)"
        elif not isinstance(title, str | None):
            yield where, "title must be a string"
        else:
            yield (
                where,
                Evidence(
                    id=str(ident).strip(),
                    title=title or "",
                    text=text.strip(),
                    source="",
                    score=0.0,
                ),
            )


def _iter_folder(path: Path, max_bytes: int) -> Iterator[tuple[str, Evidence | str]]:
    for file in sorted(p for p in path.rglob("*") if p.suffix.lower() in {".txt", ".md"}):
        try:
            text = _read(file, max_bytes).decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            yield str(file), f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            continue
        if text:
            ident = str(file.relative_to(path))
            yield str(file), Evidence(id=ident, title=file.stem, text=text, source="", score=0.0)
