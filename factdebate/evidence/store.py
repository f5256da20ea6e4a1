"""Evidence on disk: a log folder (two Parquet tables and a JSON card), a snapshot file, loaders."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Collection
from importlib import metadata
from pathlib import Path
from typing import Any

from factdebate.evidence.format import (
    FORMAT,
    KIND,
    CallRecord,
    Document,
    EvidenceError,
    Snapshot,
    merged,
)
from factdebate.tools.core.files import read_bounded_bytes, write_atomic

LOG_DIR = "evidence"
"""A run folder's evidence log: ``OUT/evidence/``."""
CALLS, DOCUMENTS, CARD = "calls.parquet", "documents.parquet", "evidence.json"
JOURNAL = "journal.jsonl"
"""A running run's calls, one JSON line each, until its log is compacted."""
MAX_PART_BYTES = 4 * 1024**3  # one table of a log or snapshot (a large run's documents)
MAX_CARD_BYTES = 1024 * 1024
Loader = tuple[Callable[[Path], bool], Callable[[Path, Collection[str] | None], Snapshot]]
LOADERS: list[Loader] = []
"""Other layouts that load as a snapshot, as ``(looks_like, load)``: a knowledge store."""


def register_loader(
    looks_like: Callable[[Path], bool], load: Callable[[Path, Collection[str] | None], Snapshot]
) -> None:
    """Let ``open_snapshot`` read one more layout (``load`` gets a path ``looks_like`` took)."""
    LOADERS.append((looks_like, load))


def project_version() -> str:
    """The installed factdebate version ("" when it is not installed)."""
    try:
        return metadata.version("factdebate")
    except metadata.PackageNotFoundError:
        return ""


def _call_table(calls: list[CallRecord]) -> Any:
    import pyarrow as pa

    text = pa.string()
    schema = pa.schema(
        [
            ("item", text),
            ("claim", text),
            ("agent", text),
            ("tool", text),
            ("backend", text),
            ("query", text),
            ("k", pa.int32()),
            ("collection", text),
            ("generation", text),
            ("time", text),
            ("docs", pa.list_(text)),
            ("scores", pa.list_(pa.float64())),
            ("options", text),
            ("origin", text),
        ]
    )
    rows = [c.row() for c in calls]
    return pa.Table.from_pylist(rows, schema=schema)


def _document_table(documents: dict[str, Document]) -> Any:
    import pyarrow as pa

    text = pa.string()
    schema = pa.schema([(n, text) for n in ("hash", "id", "title", "text", "url", "source")])
    return pa.Table.from_pylist([vars(d) for d in documents.values()], schema=schema)


def _parquet_bytes(table: Any) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def card_of(snapshot: Snapshot) -> dict[str, Any]:
    """The JSON card of a log or snapshot: format, provenance and its summary."""
    summary = snapshot.summary()
    return {
        **snapshot.info,
        "format": FORMAT,
        "kind": KIND,
        "project_version": snapshot.info.get("project_version") or project_version(),
        **{k: summary[k] for k in ("calls", "documents", "backends", "first", "last", "digest")},
    }


def parts_of(snapshot: Snapshot) -> dict[str, bytes]:
    """The three files of a log or snapshot, by name."""
    return {
        CALLS: _parquet_bytes(_call_table(snapshot.calls)),
        DOCUMENTS: _parquet_bytes(_document_table(snapshot.documents)),
        CARD: (json.dumps(card_of(snapshot), indent=2, default=str) + "\n").encode("utf-8"),
    }


def write_log(folder: Path, snapshot: Snapshot) -> Path:
    """Write ``snapshot`` as the log folder ``folder`` (each file atomically); return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in parts_of(snapshot).items():
        write_atomic(folder / name, data)
    return folder


def write_snapshot_file(path: Path, snapshot: Snapshot) -> Path:
    """Write ``snapshot`` as one file (a zip of the log's three files), atomically."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in parts_of(snapshot).items():
            archive.writestr(name, data)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, buffer.getvalue())
    return path


def _card(raw: bytes, where: str) -> dict[str, Any]:
    """The card's facts, refusing one that is not ours or comes from a newer version."""
    try:
        card = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvidenceError(f"{where}: {CARD} is not JSON ({exc})") from exc
    if not isinstance(card, dict) or card.get("kind") != KIND:
        raise EvidenceError(f"{where}: not a factdebate evidence snapshot")
    version = card.get("format")
    if not isinstance(version, int) or isinstance(version, bool):
        raise EvidenceError(f"{where}: its format version is missing")
    if version > FORMAT:
        raise EvidenceError(
            f"{where}: written in evidence format {version} by a newer factdebate; this one "
            f"reads up to format {FORMAT}: upgrade factdebate"
        )
    return card


def _rows(raw: bytes, name: str, where: str, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of one Parquet table, refusing a damaged file or missing columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(raw))
    except (pa.ArrowException, OSError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:200]
        raise EvidenceError(f"{where}: {name} is not a readable Parquet table ({reason})") from exc
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise EvidenceError(f"{where}: {name} lacks the column(s) {', '.join(missing)}")
    rows: list[dict[str, Any]] = table.select(list(columns)).to_pylist()
    return rows


def _texts(row: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    return ["" if row[k] is None else str(row[k]) for k in keys]


def from_parts(parts: dict[str, bytes], where: str) -> Snapshot:
    """A snapshot from the three files' bytes, checked (hashes, references, version).

    Raises:
        EvidenceError: a file is missing, damaged, from a newer version, or altered.
    """
    for name in (CARD, CALLS, DOCUMENTS):
        if name not in parts:
            raise EvidenceError(f"{where}: not an evidence snapshot (no {name})")
    card = _card(parts[CARD], where)
    doc_keys = ("hash", "id", "title", "text", "url", "source")
    documents = {}
    for row in _rows(parts[DOCUMENTS], DOCUMENTS, where, doc_keys):
        doc = Document(*_texts(row, doc_keys))
        documents[doc.hash] = doc
    text_keys = ("item", "claim", "agent", "tool", "backend", "query", "collection", "generation")
    columns = (*text_keys, "time", "k", "docs", "scores", "options", "origin")
    calls = []
    for row in _rows(parts[CALLS], CALLS, where, columns):
        texts = dict(zip(text_keys, _texts(row, text_keys), strict=True))
        calls.append(
            CallRecord(
                **texts,
                k=int(row["k"] or 0),
                time=str(row["time"] or ""),
                docs=tuple(str(h) for h in row["docs"] or ()),
                scores=tuple(float(s) for s in row["scores"] or ()),
                options=str(row["options"] or ""),
                origin=str(row["origin"] or "live"),
            )
        )
    info = {k: v for k, v in card.items() if k not in ("calls", "documents", "digest")}
    snapshot = Snapshot(documents, calls, info)
    snapshot.check(where)
    return snapshot


def read_log(folder: Path) -> Snapshot:
    """The log folder ``folder`` (``OUT/evidence``) as a snapshot."""
    parts = {}
    for name in (CARD, CALLS, DOCUMENTS):
        if not (folder / name).exists():
            raise EvidenceError(f"{folder}: not an evidence log (no {name})")
        limit = MAX_CARD_BYTES if name == CARD else MAX_PART_BYTES
        parts[name] = read_bounded_bytes(folder / name, limit, f"evidence {name}", EvidenceError)
    return from_parts(parts, str(folder))


def read_snapshot_file(path: Path) -> Snapshot:
    """An exported snapshot file as a snapshot (sizes bounded before anything is unpacked)."""
    where = str(path)
    try:
        with zipfile.ZipFile(path) as archive:
            parts = {}
            for info in archive.infolist():
                if info.filename not in (CARD, CALLS, DOCUMENTS):
                    continue
                limit = MAX_CARD_BYTES if info.filename == CARD else MAX_PART_BYTES
                if info.file_size > limit:
                    raise EvidenceError(f"{where}: {info.filename} is over {limit} bytes")
                parts[info.filename] = archive.read(info)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        reason = " ".join(str(exc).split())[:160]
        raise EvidenceError(
            f"{where}: not an evidence snapshot file, or a truncated one ({reason})"
        ) from exc
    return from_parts(parts, where)


def open_snapshot(path: Path | str, items: Collection[str] | None = None) -> Snapshot:
    """Frozen evidence from ``path``: a run folder, a log folder, a snapshot file, or a loader's.

    A registered loader reads its own layout (a knowledge store), only ``items``' evidence
    when a run names its item ids (a store holds a file per claim of a whole split).

    Raises:
        EvidenceError: nothing there, or not evidence this version can read (one line).
    """
    where = Path(path).expanduser()
    if not where.exists():
        raise EvidenceError(f"{where}: no such file or folder")
    for looks_like, load in LOADERS:
        if looks_like(where):
            return load(where, items)
    if where.is_dir():
        if (where / LOG_DIR / CARD).exists():
            return read_log(where / LOG_DIR)
        if (where / CARD).exists():
            return read_log(where)
        repeats = sorted(where.glob(f"repeat-*/{LOG_DIR}/{CARD}"))  # `bench --repeats N`
        if repeats:
            return merged([read_log(card.parent) for card in repeats])
        if (where / LOG_DIR / JOURNAL).exists() or (where / JOURNAL).exists():
            raise EvidenceError(
                f"{where}: its run was interrupted and its evidence is still a journal: run the "
                "same command again to finish it (the journal is folded in at the end)"
            )
        raise EvidenceError(
            f"{where}: holds no evidence log ({LOG_DIR}/{CARD}): run the benchmark first, or "
            "give a snapshot file"
        )
    if not where.is_file():
        raise EvidenceError(f"{where}: not a regular file")
    return read_snapshot_file(where)
