"""Sharing evidence: runs' logs exported as one snapshot file, and a snapshot summarised."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factdebate.evidence.format import EvidenceError, Snapshot, merged
from factdebate.evidence.store import (
    CARD,
    LOG_DIR,
    open_snapshot,
    project_version,
    read_log,
    run_facts,
    write_snapshot_file,
)
from factdebate.tools.core.files import check_target, lies_inside


def export_snapshot(sources: Sequence[Path | str], out: Path | str) -> Snapshot:
    """Write the evidence of ``sources`` (run folders, logs or snapshots) as one snapshot file.

    Documents are stored once across every source; the calls keep their order (source by
    source); the card names the project version, the runs, datasets, backends and dates.

    Raises:
        EvidenceError: no source, a source without readable evidence, or a bad target.
    """
    if not sources:
        raise EvidenceError("give at least one run folder or snapshot to export")
    target = Path(out).expanduser()
    check_target(target, "--out")
    for source in sources:
        if lies_inside(target, Path(source).expanduser()):
            raise EvidenceError(
                f"--out {target}: lies inside the source {source}; write the snapshot "
                "outside the runs it reads"
            )
    parts, runs = [], []
    for source in sources:
        path = Path(source).expanduser()
        parts.append(open_snapshot(path))
        facts = run_facts(path)
        if facts:
            runs.append(facts)
    snapshot = merged(parts)
    datasets = list(snapshot.info.get("datasets") or [])
    datasets += [
        str(r["dataset"]) for r in runs if r.get("dataset") and r["dataset"] not in datasets
    ]
    snapshot.info.update(
        {
            "project_version": project_version(),
            "datasets": datasets,
            "runs": runs,
            "exported_from": [str(s) for s in sources],
        }
    )
    write_snapshot_file(target, snapshot)
    return snapshot


def describe(path: Path | str) -> dict[str, Any]:
    """What a snapshot holds: items, calls, documents, backends, the date range, its hash."""
    snapshot = open_snapshot(path)
    summary = snapshot.summary()
    summary["project_version"] = snapshot.info.get("project_version") or ""
    summary["runs"] = snapshot.info.get("runs") or []
    summary["read"] = snapshot.info.get("read") or {}
    return summary


def calls_by_item(folder: Path) -> dict[str, list[dict[str, Any]]] | None:
    """A run folder's logged calls by item id (None when it has no log), for ``load_run``.

    Each call keeps its agent, tool, backend, query, k, collection, index generation, time
    and origin; its documents come in rank order as ``hash``, ``id``, ``title``, ``url`` and
    ``score`` (their texts are in the log's documents table, and in the transcript).
    """
    if not (folder / LOG_DIR / CARD).is_file():
        return None
    snapshot = read_log(folder / LOG_DIR)
    found: dict[str, list[dict[str, Any]]] = {}
    for call in snapshot.calls:
        row = call.row()
        documents = [
            {"hash": key, "id": doc.id, "title": doc.title, "url": doc.url, "score": score}
            for key, score in zip(call.docs, call.scores, strict=True)
            for doc in (snapshot.documents[key],)
        ]
        for name in ("docs", "scores", "item", "claim", "options"):
            row.pop(name)
        found.setdefault(call.item, []).append({**row, "documents": documents})
    return found
