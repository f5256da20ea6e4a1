"""Read documents to index: the bundled default corpus, a JSONL file or a folder of text."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from tools.records import Evidence

DEFAULT_COLLECTION = "default"


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


def load_documents(path: Path) -> list[Evidence]:
    """Load ``id``/``title``/``text`` JSONL, or every .txt/.md file under a folder.

    Raises:
        CorpusError: missing path, unreadable or malformed records (with file and line),
            duplicate ids, or no documents at all.
    """
    if not path.exists():
        raise CorpusError(f"no such file or folder: {path}")
    docs = list(_iter_folder(path) if path.is_dir() else _iter_jsonl(path))
    if not docs:
        raise CorpusError(f"no documents found in {path}")
    seen: set[str] = set()
    for doc in docs:
        if doc["id"] in seen:
            raise CorpusError(f"duplicate document id {doc['id']!r} in {path}")
        seen.add(doc["id"])
    return docs


def _iter_jsonl(path: Path) -> Iterator[Evidence]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path} is not UTF-8 text ({exc.reason})") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = str(record["text"]).strip()
            ident = str(record["id"]).strip()
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise CorpusError(
                f"{path}:{number}: expected JSON with id, title, text ({exc})"
            ) from exc
        if not text or not ident:
            raise CorpusError(f"{path}:{number}: empty id or text")
        yield Evidence(
            id=ident, title=str(record.get("title", "")), text=text, source="", score=0.0
        )


def _iter_folder(path: Path) -> Iterator[Evidence]:
    for file in sorted(p for p in path.rglob("*") if p.suffix.lower() in {".txt", ".md"}):
        try:
            text = file.read_text(encoding="utf-8").strip()
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{file} is not UTF-8 text ({exc.reason})") from exc
        if text:
            ident = str(file.relative_to(path))
            yield Evidence(id=ident, title=file.stem, text=text, source="", score=0.0)
