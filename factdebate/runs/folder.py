"""A run folder: ``run.json`` says what ran, JSONL files hold one finished row per line.

Bench runs, long-answer folders (``gen-answers`` / ``score-answers``) and SynDeC datasets are
all kept this way: a row is appended (and flushed) the moment its item finishes, so a killed
run resumes with the items it had not finished, and the same command finds the same folder.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.files import check_target, write_atomic
from factdebate.tools.core.json_text import json_problem, parse_json
from factdebate.tools.core.secrets import redact_deep

RUN_FILE = "run.json"
log = logging.getLogger("factdebate")


class RunFolderError(FactDebateError, ValueError):
    """A run folder that cannot be used: not a folder, another run's, or a corrupt row."""


class RunNotFoundError(FactDebateError, FileNotFoundError):
    """A folder that holds no finished run where one is needed (nothing to report)."""


def check_out_dir(out_dir: Path, files: Sequence[str] = (RUN_FILE,)) -> None:
    """Refuse a run folder that is a file or a device, or that cannot be created (one line).

    Nothing is created here: a run refused later (a bad model, say) leaves no folder behind.
    ``files`` are checked too: they are appended to or replaced, never through a link.

    Raises:
        RunFolderError: ``out_dir`` (or a folder above it) is not a folder, or is not writable.
    """
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise RunFolderError(
            f"--out {out_dir}: is not a folder (a file or a device); give a folder"
        )
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise RunFolderError(f"--out {out_dir}: cannot create it, {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise RunFolderError(
            f"--out {out_dir}: cannot create or write it ({existing} is read-only)"
        )
    for name in files:
        check_target(path / name, "--out")


def make_out_dir(out_dir: Path) -> None:
    """Create the run folder; an OS refusal is one line (RunFolderError)."""
    try:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunFolderError(f"--out {out_dir}: cannot create it ({exc.strerror or exc})") from exc


def check_same_run(
    out_dir: Path,
    run: dict[str, Any],
    keys: Iterable[str] | None = None,
    what: str = "a run with",
    recorded_later: Iterable[str] = (),
    *,
    write: bool = True,
) -> None:
    """Write ``run.json``, or refuse a folder whose ``run.json`` differs in any of ``keys``.

    ``keys`` default to every key of ``run``. A key in ``recorded_later`` is compared only
    when the stored run has it (an older version did not record it). Secrets are redacted.
    ``write=False`` only compares (a refusal before a run pays for anything, its folder
    not yet made).

    Raises:
        RunFolderError: the folder holds another run ("{out_dir} holds {what} different ...").
    """
    run = redact_deep(run)  # a key inside a model URL is never written
    path = Path(out_dir) / RUN_FILE
    if path.is_file():
        before = _run_json(path)
        later = set(recorded_later)
        changed = [
            k
            for k in (list(run) if keys is None else keys)
            if (k in before or k not in later) and before.get(k) != run.get(k)
        ]
        if changed:
            raise RunFolderError(
                f"{out_dir} holds {what} different {', '.join(changed)}; "
                "use another --out directory to start a new run"
            )
    if write:
        write_atomic(path, json.dumps(run, indent=2, default=str) + "\n")


def read_run(out_dir: Path) -> dict[str, Any]:
    """The folder's ``run.json`` ({} when there is none)."""
    path = Path(out_dir) / RUN_FILE
    if not path.is_file():
        return {}
    return _run_json(path)


def _run_json(path: Path) -> dict[str, Any]:
    """A ``run.json`` as a dict ({} when it holds no object); unreadable JSON is one line."""
    try:
        loaded = parse_json(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        why = json_problem(exc) if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
        raise RunFolderError(f"{path}: not a readable run record ({why})") from exc
    return loaded if isinstance(loaded, dict) else {}


def _row_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str) + "\n"


def read_rows(path: Path, *, strict: bool = False, repair: bool = False) -> list[dict[str, Any]]:
    """The rows of a JSONL file, the first of each ``id``, in file order.

    A last line without its newline that is not a whole row is the remains of a killed write
    and is dropped. Any other line that is not a JSON object with an ``id`` is skipped, or
    refused with ``strict``. With ``repair`` the file is then rewritten atomically without
    what was dropped or repeated, ending in a newline, so later appends stay line-aligned.

    Raises:
        RunFolderError: with ``strict``, a complete line that is not a row (its number given).
    """
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")  # U+2028 stays inside a row
    rows: dict[str, dict[str, Any]] = {}
    dropped = duplicated = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        torn = number == len(lines)  # no newline after it
        try:
            row = parse_json(line)
        except json.JSONDecodeError as exc:
            row, problem = None, f"not JSON ({json_problem(exc, line=False)})"
        else:
            problem = "" if isinstance(row, dict) and "id" in row else "a row needs an id"
        if problem:
            if strict and not torn:
                raise RunFolderError(f"{path}: line {number} is corrupt ({problem})")
            if torn:
                log.warning("%s: dropping a truncated last line (%d chars)", path, len(line))
            dropped = True
            continue
        assert row is not None
        if str(row["id"]) in rows:
            duplicated = True
            continue
        rows[str(row["id"])] = row
    if repair and (dropped or duplicated or not text.endswith("\n")) and text:
        write_rows(path, rows.values())
    return list(rows.values())


def write_rows(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Replace a JSONL file with exactly ``rows``, all at once."""
    write_atomic(path, "".join(_row_line(row) for row in rows))


class RowSink:
    """Appends finished rows to a JSONL file, each flushed (and optionally fsynced) at once."""

    def __init__(self, handle: Any, fsync: bool) -> None:
        self._handle = handle
        self._fsync = fsync

    def add(self, row: dict[str, Any]) -> None:
        """Append one row as one line."""
        self._handle.write(_row_line(row))
        self._handle.flush()
        if self._fsync:
            os.fsync(self._handle.fileno())


class RowsBusyError(RunFolderError):
    """Another process is writing the same JSONL file (a bench still running)."""


@contextlib.contextmanager
def rows_lock(path: Path, *, wait: bool) -> Iterator[None]:
    """Be the one writer of the JSONL file ``path`` for the block (an ``flock`` beside it).

    The lock ends with the process, so a killed writer never leaves the file locked. The lock
    file is removed as the block ends, while still held; a writer that was waiting on the
    removed file finds the path gone or another file there and locks what the path holds now,
    so two writers never both hold it.

    Raises:
        RowsBusyError: without ``wait``, another process holds it.
    """
    import fcntl

    path = Path(path)
    lock = path.with_name(f".{path.name}.lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise RowsBusyError(
                f"{path} is being written by another process (a bench still running?): "
                "wait for it to finish, then run this again"
            ) from None
        held = os.fstat(fd)
        try:
            current = os.stat(lock)
        except FileNotFoundError:
            current = None
        if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # locked a file its holder removed: lock the one at the path now
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # no empty lock file left in the run folder
        os.close(fd)  # closing releases the lock


def check_rows_free(path: Path) -> None:
    """Refuse now when another process writes the JSONL file ``path`` (nothing is created).

    For checks before a run pays for anything (its provider probe); the writer still takes
    ``rows_lock`` for the run itself.

    Raises:
        RowsBusyError: another process holds the file's lock.
    """
    path = Path(path)
    if path.with_name(f".{path.name}.lock").is_file():
        with rows_lock(path, wait=False):
            pass


@contextlib.contextmanager
def append_rows(path: Path, *, fsync: bool = False, wait: bool = True) -> Iterator[RowSink]:
    """Open ``path`` for appending rows for the length of the block (its one writer).

    Raises:
        RowsBusyError: without ``wait``, another writer holds the file.
    """
    with rows_lock(path, wait=wait), Path(path).open("a", encoding="utf-8") as handle:
        yield RowSink(handle, fsync)
