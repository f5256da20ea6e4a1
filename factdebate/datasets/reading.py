"""Reading dataset files: bytes, text, JSON, JSONL and Parquet rows, fields and load issues."""

from __future__ import annotations

import json
import logging
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from factdebate.datasets.records import DatasetError, LoadedDataset, LoadIssue, datasets_root
from factdebate.tools.core.json_text import json_problem, parse_json
from factdebate.tools.core.records import Evidence

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_DATASET_BYTES = 4 * 1024**3  # largest dataset file read
RECORD_SUFFIXES = (".jsonl", ".json", ".parquet")


def data_folder(path: str | Path | None, name: str) -> Path:
    """Return the given folder, else the folder ``name`` under the datasets root."""
    return Path(path) if path is not None else datasets_root(name) / name


GET_HINT = "`factdebate datasets` says how to get each dataset"


def read_bytes(path: Path) -> bytes:
    """Read a dataset file (at most ``MAX_DATASET_BYTES``); missing or empty: DatasetError."""
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path} ({GET_HINT})")
    if path.stat().st_size > MAX_DATASET_BYTES:
        raise DatasetError(f"{path}: larger than {MAX_DATASET_BYTES} bytes")
    data = path.read_bytes()
    if not data.strip():
        raise DatasetError(f"dataset file is empty: {path}")
    return data


def _utf8_problem(exc: UnicodeDecodeError) -> str:
    return f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at column {exc.start + 1})"


def read_text(path: Path) -> str:
    """Read a whole dataset file as text; invalid UTF-8 is a DatasetError naming FILE:LINE."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise DatasetError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})"
        ) from None


def read_json(path: Path) -> Any:
    """Parse a whole JSON file; invalid JSON is a DatasetError naming FILE:LINE."""
    try:
        return parse_json(read_text(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}: invalid JSON: {json_problem(exc)}") from exc


def jsonl_records(path: Path, issues: list[LoadIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; bad lines (invalid UTF-8 too) become issues.

    Lines end at a newline only: U+0085, U+2028 and U+2029 are valid inside JSON strings (the
    official FELM file holds one), and ids taken from line numbers must not shift.
    """
    for lineno, raw in enumerate(read_bytes(path).split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            issues.append(LoadIssue(str(path), lineno, _utf8_problem(exc)))
            continue
        try:
            rec = parse_json(line)
        except json.JSONDecodeError as exc:
            problem = f"invalid JSON: {json_problem(exc, line=False)}"
            issues.append(LoadIssue(str(path), lineno, problem))
            continue
        if isinstance(rec, dict):
            yield lineno, rec
        else:
            issues.append(LoadIssue(str(path), lineno, "expected a JSON object"))


def _describe(exc: Exception) -> str:
    return f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)


def collect(
    rows: Iterable[tuple[int, Any]],
    path: Path,
    issues: list[LoadIssue],
    make: Callable[[int, Any], T],
    where: Callable[[int], str] = lambda _: "",
) -> list[T]:
    """Convert rows with ``make``; a failing row becomes an issue, the rest still load."""
    out: list[T] = []
    for line, rec in rows:
        try:
            out.append(make(line, rec))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            issues.append(
                LoadIssue(str(path), 0 if where(line) else line, where(line) + _describe(exc))
            )
    return out


def str_field(rec: Any, key: str) -> str:
    """Return a record's non-empty string field, NFC-normalized; anything else: ValueError."""
    value = rec[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"field {key!r} must be a non-empty string")
    return nfc(value)


def str_list_field(rec: Any, key: str) -> list[str]:
    """Return a record's list-of-strings field (as written); anything else: ValueError."""
    value = rec[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {key!r} must be a list of strings")
    return list(value)


def nfc(text: str) -> str:
    """Return the text in Unicode NFC form."""
    # Some files mix decomposed (NFD) accents with composed ones; unify for matching.
    return unicodedata.normalize("NFC", text)


def make_evidence(id_: str, text: str, title: str = "", source: str = "given") -> Evidence:
    """Build an Evidence passage (NFC text and title, score 0)."""
    return Evidence(id=id_, title=nfc(title), text=nfc(text), source=source, score=0.0)


def logged(items: list[T], issues: list[LoadIssue]) -> list[T]:
    """Log each issue as a warning and return the items."""
    for issue in issues:
        log.warning("%s", issue)
    return items


def locate(path: str | Path | None, name: str, candidates: Iterable[str]) -> Path:
    """Return a file given directly, else the first candidate (relative path) in the folder."""
    if path is not None and Path(path).is_file():
        return Path(path)
    folder = data_folder(path, name)
    names = list(candidates)
    for candidate in names:
        if (folder / candidate).is_file():
            return folder / candidate
    raise DatasetError(f"{name}: none of {', '.join(names)} found in {folder} ({GET_HINT})")


def find_file(path: str | Path | None, name: str, word: str) -> Path:
    """Return a file given directly, else the folder's first data file with ``word`` in its path."""
    if path is not None and Path(path).is_file():
        return Path(path)
    folder = data_folder(path, name)
    found = sorted(
        p
        for p in (folder.rglob("*") if folder.is_dir() else ())
        if p.is_file()
        and p.suffix in RECORD_SUFFIXES
        and word in str(p.relative_to(folder)).lower()
    )
    if not found:
        raise DatasetError(
            f"{name}: no .jsonl/.json/.parquet file with {word!r} in its path under {folder} "
            f"({GET_HINT})"
        )
    return found[0]


def record_rows(file: Path, issues: list[LoadIssue]) -> tuple[Iterator[tuple[int, Any]], Any]:
    """Return the rows of a JSONL, JSON-list or Parquet file and how a row is named in an issue.

    JSONL rows are numbered by line (issues read ``FILE:LINE``); JSON and Parquet rows by
    0-based index (issues read ``FILE: record N``).
    """
    if file.suffix == ".jsonl":
        return jsonl_records(file, issues), lambda _: ""
    if file.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            # on this thread, no read-ahead: no Arrow pool thread outlives the process's work
            rows: list[Any] = pq.read_table(file, use_threads=False, pre_buffer=False).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise DatasetError(f"{file}: unreadable Parquet file ({exc})") from exc
    else:
        data = read_json(file)
        if not isinstance(data, list):
            raise DatasetError(f"{file}: expected a JSON list of records")
        rows = data
    return iter(enumerate(rows)), lambda i: f"record {i}: "


def load_records(
    name: str,
    file: Path,
    make: Callable[[int, Any], Any],
    issues: list[LoadIssue] | None = None,
    notes: list[str] | None = None,
) -> LoadedDataset[Any]:
    """Build every record with ``make`` (which may return one item, a list, or None to skip)."""
    issues = [] if issues is None else issues
    rows, where = record_rows(file, issues)
    made = collect(rows, file, issues, make, where)
    items: list[Any] = []
    for one in made:
        if isinstance(one, list):
            items.extend(one)
        elif one is not None:
            items.append(one)
    if not items and not issues:
        raise DatasetError(f"{file}: no records")
    return LoadedDataset(name, items, issues, list(notes or []))


def record_id(rec: Any, index: int, *keys: str) -> str:
    """Return the first of ``keys`` holding a non-blank string or int, else the index."""
    for key in keys:
        value = rec.get(key)
        if isinstance(value, str | int) and str(value).strip():
            return str(value)
    return str(index)


def truth(raw: Any) -> bool:
    """Read a true/false label (a bool or the words true/false); anything else: ValueError."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    raise ValueError(f"label must be true or false, got {raw!r}")
