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
from factdebate.evidence.reading import (
    MAX_CARD_BYTES,
    MAX_PART_BYTES,
    call_rows,
    document_rows,
    json_value,
    read_card,
    zip_members,
)
from factdebate.tools.core.files import read_bounded_bytes, write_atomic

LOG_DIR = "evidence"
"""A run folder's evidence log: ``OUT/evidence/``."""
CALLS, DOCUMENTS, CARD = "calls.parquet", "documents.parquet", "evidence.json"
RUN_FILE = "run.json"
MAX_RUN_FILE_BYTES = 16 * 1024 * 1024
JOURNAL = "journal.jsonl"
"""A running run's calls, one JSON line each, until its log is compacted."""
Loader = tuple[Callable[[Path], bool], Callable[[Path, Collection[str] | None], Snapshot]]
LOADERS: list[Loader] = []
"""Other layouts that load as a snapshot, as ``(looks_like, load)``: a knowledge store."""


def run_facts(folder: Path) -> dict[str, Any]:
    """Method and dataset of a bench run folder (its ``run.json``), when it has a readable one."""
    path = folder / RUN_FILE
    if not folder.is_dir() or not path.is_file():
        return {}
    try:
        raw = read_bounded_bytes(path, MAX_RUN_FILE_BYTES, "run file", EvidenceError)
        run = json_value(raw, str(path))
    except EvidenceError:
        return {}
    if not isinstance(run, dict):
        return {}
    facts = {k: run[k] if isinstance(run.get(k), str) else None for k in ("method", "dataset")}
    return {"run": folder.name, **facts}


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
            ("dataset", text),
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


def from_parts(parts: dict[str, bytes], where: str) -> Snapshot:
    """A snapshot from the three files' bytes, checked (types, bounds, hashes, version).

    Raises:
        EvidenceError: a file is missing, damaged, from a newer version, or altered (one
            line naming the file and the row, column or field).
    """
    for name in (CARD, CALLS, DOCUMENTS):
        if name not in parts:
            raise EvidenceError(f"{where}: not an evidence snapshot (no {name})")
    card = read_card(parts[CARD], where)
    documents = {doc.hash: doc for doc in document_rows(parts[DOCUMENTS], where)}
    calls = call_rows(parts[CALLS], where)
    facts = card.model_dump(exclude_unset=True)
    info = {k: v for k, v in facts.items() if k not in ("calls", "documents", "digest")}
    snapshot = Snapshot(documents, calls, info)
    snapshot.check(where)
    if card.digest is not None and card.digest != snapshot.digest():
        raise EvidenceError(
            f"{where}: its tables' content hash {snapshot.digest()[:12]} is not the one its "
            f"{CARD} names ({card.digest[:12]}): the evidence was altered or damaged"
        )
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
    limits = {CARD: MAX_CARD_BYTES, CALLS: MAX_PART_BYTES, DOCUMENTS: MAX_PART_BYTES}
    return from_parts(zip_members(path, limits), str(path))


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
        facts = run_facts(where)
        if facts and (where / "results.jsonl").is_file():
            raise EvidenceError(
                f"{where}: its run ({facts.get('method') or 'its method'}) made no retrieval or "
                "search call: the method reads the evidence the dataset supplies, so there is "
                "no frozen evidence to export or replay"
            )
        raise EvidenceError(
            f"{where}: holds no evidence log ({LOG_DIR}/{CARD}): run the benchmark first, or "
            "give a snapshot file"
        )
    if not where.is_file():
        raise EvidenceError(f"{where}: not a regular file")
    return read_snapshot_file(where)
