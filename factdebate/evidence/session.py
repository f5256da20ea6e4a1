"""One run's evidence: a recorder (and a replayer when the run reads frozen evidence), installed."""

from __future__ import annotations

import hashlib
import os
import stat
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
from factdebate.tools.core.home import data_home

SERVED_OPEN = 8
"""Snapshots a server keeps open at once (the least recently used is closed first)."""
SHOWN_ITEMS = 5
"""Items named in the report's line on calls that went live."""
MAX_WATCHED = 200_000
"""Files whose state a served snapshot's fingerprint covers (a knowledge store's claims)."""


@dataclass
class EvidenceRun:
    """What a run records and reads: its log, and ``read`` (the snapshot it replays, if any)."""

    log: EvidenceLog
    read: dict[str, Any] = field(default_factory=dict)

    def note(self) -> str:
        """The report's line about frozen evidence: how many calls it answered, which went live.

        "" for a live run. A server's calls are read back from its transcripts, which do not
        say which were answered live; with misses ``stop`` none were.
        """
        if not self.read:
            return ""
        on_server = not self.read.get("snapshot")
        where = "opened on the server" if on_server else f"snapshot {self.read['snapshot'][:12]}"
        head = (
            f"evidence replayed from {self.read['from']} ({where}, {self.read['scope']} scope, "
            f"misses {self.read['miss']})"
        )
        calls = self.log.snapshot.calls
        if not calls:
            return f"{head}: no call was answered from it (see the items' errors)"
        if on_server:
            live = "none went live" if self.read["miss"] == "stop" else "any miss went live"
            return f"{head}: {len(calls)} calls read back from the server, {live}"
        live_items = list(
            dict.fromkeys(c.item or c.claim[:40] for c in calls if c.origin == "live")
        )
        frozen = len(calls) - sum(c.origin == "live" for c in calls)
        if not live_items:
            return f"{head}: {frozen} calls answered from it, no live retrieval or search"
        shown = ", ".join(live_items[:SHOWN_ITEMS])
        more = f" and {len(live_items) - SHOWN_ITEMS} more" if len(live_items) > SHOWN_ITEMS else ""
        went = len(calls) - frozen
        return f"{head}: {frozen} calls answered from it, {went} went live (items {shown}{more})"


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
    Replayer(snapshot, scope, miss, EvidenceLog(), dataset or "")  # scope checked, first
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
    folder = None if out_dir is None else Path(out_dir) / LOG_DIR
    if folder is not None:
        check_log_folder(folder)
    if replay is None:  # live tools keep their indexes and caches in the home: made first
        data_home()
    info: dict[str, Any] = {
        "project_version": project_version(),
        "datasets": [dataset] if dataset else [],
    }
    if replay is not None:
        info["read"] = replay[1]
    log = EvidenceLog(folder, info)
    run = EvidenceRun(log, replay[1] if replay is not None else {})
    hook: EvidenceHook = Recorder(log)
    if replay is not None:
        _, scope, miss = settings_of(context)
        hook = Replayer(replay[0], scope, miss, log, dataset or "")
    try:
        with use_hook(hook):
            yield run
    finally:
        log.close()


_served: OrderedDict[tuple[str, str, str, str], Replayer] = OrderedDict()
_served_lock = threading.Lock()


def served_hook(source: str, scope: str, miss: str) -> EvidenceHook:
    """The frozen evidence a server's run names, opened once (again when its file changes).

    The cache keys on a fingerprint of every file the source holds (size, times, inode), so
    an edit inside a folder is seen, not only one that touches the folder itself.

    Raises:
        EvidenceMissError: the source cannot be read as evidence, or not in ``scope``: the
            run stops with that line rather than reach a verdict without its evidence.
    """
    try:
        key = (source, scope, miss, fingerprint(Path(source)))
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


def fingerprint(path: Path) -> str:
    """A hash of the state of ``path`` and every file under it (sizes, times, inodes).

    Raises:
        OSError: ``path`` cannot be read. EvidenceError: it holds over ``MAX_WATCHED`` files.
    """
    sha = hashlib.sha256()
    pending = [path]
    seen = 0
    while pending:
        where = pending.pop()
        info = os.stat(where, follow_symlinks=where == path)
        sha.update(
            f"{where}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{info.st_ino}"
            "\n".encode("utf-8", "surrogateescape")
        )
        seen += 1
        if seen > MAX_WATCHED:
            raise EvidenceError(f"{path}: holds over {MAX_WATCHED} files")
        if stat.S_ISDIR(info.st_mode):
            pending.extend(sorted((Path(e.path) for e in os.scandir(where)), reverse=True))
    return sha.hexdigest()


def check_log_folder(folder: Path) -> None:
    """Refuse an evidence log folder that cannot be one, before any call is made.

    ``folder`` and each of its existing parents must be folders (not a device, a FIFO or a
    file: ``--evidence-log /dev/null`` would throw every paid answer away), and the nearest
    existing one writable.

    Raises:
        EvidenceError: one line naming the path and why.
    """
    where = folder
    while True:
        try:
            mode = os.stat(where).st_mode
        except (FileNotFoundError, NotADirectoryError):  # a part above it is checked next
            if where.parent == where:
                break
            where = where.parent
            continue
        except OSError as exc:
            raise EvidenceError(f"evidence log {folder}: {exc.strerror or exc}") from None
        if not stat.S_ISDIR(mode):
            kind = "a file" if stat.S_ISREG(mode) else "a device or a pipe"
            raise EvidenceError(
                f"evidence log {folder}: {where} is {kind}, not a folder: give a folder"
            )
        if not os.access(where, os.W_OK | os.X_OK):
            raise EvidenceError(f"evidence log {folder}: {where} is not writable")
        break
