"""One run's evidence: a recorder (and a replayer when the run reads frozen evidence), installed."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factdebate.evidence.format import EvidenceError, Snapshot
from factdebate.evidence.recording import EvidenceLog, Recorder
from factdebate.evidence.serving import Replayer
from factdebate.evidence.store import LOG_DIR, open_snapshot, project_version
from factdebate.tools.core.evidence_hook import (
    EvidenceHook,
    EvidenceMissError,
    use_hook,
)

SERVED_OPEN = 8
"""Snapshots a server keeps open at once (the least recently used is closed first)."""


@dataclass
class EvidenceRun:
    """What a run records and reads: its log, and ``read`` (the snapshot it replays, if any)."""

    log: EvidenceLog
    read: dict[str, Any] = field(default_factory=dict)

    def note(self) -> str:
        """The report's line about frozen evidence ("" for a live run)."""
        if not self.read:
            return ""
        where = (
            f"snapshot {self.read['snapshot'][:12]}"
            if self.read.get("snapshot")
            else "opened on the server"
        )
        return (
            f"evidence replayed from {self.read['from']} ({where}, {self.read['scope']} scope, "
            f"misses {self.read['miss']}): no live retrieval or search"
        )


def settings_of(context: Any) -> tuple[str, str, str]:
    """``(evidence_from, evidence_scope, evidence_miss)`` of a settings object or dict."""

    def get(name: str, default: str) -> str:
        found = context.get(name) if isinstance(context, dict) else getattr(context, name, None)
        return str(found or default)

    return get("evidence_from", ""), get("evidence_scope", "exact"), get("evidence_miss", "stop")


def served_evidence(context: Any) -> dict[str, Any]:
    """What a run sent to a server reads: the frozen evidence it names there ({}: live tools).

    The server opens it (only what its operator lists); the run records its name and scope.
    """
    source, scope, miss = settings_of(context)
    return {"from": source, "scope": scope, "miss": miss, "on": "server"} if source else {}


def check_dataset(snapshot: Snapshot, source: str, dataset: str | None) -> None:
    """Refuse a snapshot whose items come from another dataset than the run's."""
    held = [str(d) for d in snapshot.info.get("datasets") or []]
    if dataset and held and dataset not in held:
        raise EvidenceError(
            f"{source}: holds evidence for {', '.join(held)}, not {dataset}: give the snapshot "
            "of this dataset"
        )


def open_replay(
    context: Any, dataset: str | None = None, items: Collection[str] | None = None
) -> tuple[Snapshot, dict[str, Any]] | None:
    """The snapshot a run's settings name, checked, and what the run records about it.

    ``items`` (the run's item ids) lets a knowledge store load only those claims.

    Raises:
        EvidenceError: the path holds no readable evidence, another dataset's, or a bad scope.
    """
    source, scope, miss = settings_of(context)
    if not source:
        return None
    snapshot = open_snapshot(source, items)
    check_dataset(snapshot, source, dataset)
    Replayer(snapshot, scope, miss, EvidenceLog())  # the scope check, before any item runs
    read = {"from": source, "snapshot": snapshot.digest(), "scope": scope, "miss": miss}
    return snapshot, read


@contextmanager
def evidence_session(
    context: Any,
    out_dir: Path | None = None,
    dataset: str | None = None,
    replay: tuple[Snapshot, dict[str, Any]] | None = None,
) -> Iterator[EvidenceRun]:
    """Record every call made inside the block, answered from frozen evidence if the settings say.

    ``replay`` is what ``open_replay`` returned (the snapshot is opened once). With
    ``out_dir`` the log is kept in ``out_dir/evidence`` (appended as calls happen, compacted
    when the block ends, also when it fails).

    Raises:
        EvidenceError: see ``open_replay``.
    """
    if replay is None:
        replay = open_replay(context, dataset)
    info: dict[str, Any] = {
        "project_version": project_version(),
        "datasets": [dataset] if dataset else [],
    }
    if replay is not None:
        info["read"] = replay[1]
    log = EvidenceLog(None if out_dir is None else Path(out_dir) / LOG_DIR, info)
    run = EvidenceRun(log, replay[1] if replay is not None else {})
    hook: EvidenceHook = Recorder(log)
    if replay is not None:
        _, scope, miss = settings_of(context)
        hook = Replayer(replay[0], scope, miss, log)
    try:
        with use_hook(hook):
            yield run
    finally:
        log.close()


_served: OrderedDict[tuple[str, str, str, int], Replayer] = OrderedDict()
_served_lock = threading.Lock()


def served_hook(source: str, scope: str, miss: str) -> EvidenceHook:
    """The frozen evidence a server's run names, opened once (again when its file changes).

    Raises:
        EvidenceMissError: the source cannot be read as evidence, or not in ``scope``: the
            run stops with that line rather than reach a verdict without its evidence.
    """
    try:
        key = (source, scope, miss, Path(source).stat().st_mtime_ns)
        with _served_lock:
            if key in _served:
                _served.move_to_end(key)
                return _served[key]
            replayer = Replayer(open_snapshot(source), scope, miss, EvidenceLog(keep=False))
            _served[key] = replayer
            while len(_served) > SERVED_OPEN:
                _served.popitem(last=False)
            return replayer
    except (OSError, EvidenceError) as exc:
        raise EvidenceMissError(f"frozen evidence {source}: {exc}") from None
