"""Files: atomic rewrites (a temp file beside the target, fsynced, renamed) and bounded reads."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from factdebate.tools.core.errors import FactDebateError, SettingsError

FILE_MODE = 0o666
"""Mode asked for new files, less the process umask (0644 under the usual 022), the same as
a file opened for appending (results.jsonl): reports and pages are meant to be read and
shared, and secrets are redacted before anything is written."""


class OutputTargetError(FactDebateError, ValueError):
    """An output path that must not be written: a folder, a device, a pipe or a symlink."""


def check_target(path: Path, what: str = "output") -> None:
    """Refuse a target that exists but is not a regular file (or is a symlink to anything).

    Renaming over a device, a pipe or a symlink would replace it with a regular file (as root,
    ``--html /dev/null`` replaced the system's ``/dev/null``); the caller gets one line instead.

    Raises:
        OutputTargetError: ``path`` is a symlink, a folder, or any other non-regular file.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputTargetError(f"{what} {path}: cannot be checked ({exc.strerror})") from exc
    if stat.S_ISLNK(info.st_mode):
        raise OutputTargetError(f"{what} {path}: is a symlink; give a regular file path")
    if stat.S_ISDIR(info.st_mode):
        raise OutputTargetError(f"{what} {path}: is a folder; give a file name")
    if not stat.S_ISREG(info.st_mode):
        raise OutputTargetError(f"{what} {path}: is not a regular file (a device or a pipe)")


def lies_inside(target: Path, folder: Path) -> bool:
    """Whether ``target`` is ``folder`` or lies under it (links resolved; False if unknowable).

    An output inside the folder a command reads (a run, a log) would overwrite what it reads.
    """
    try:
        where, there = Path(target).resolve(), Path(folder).resolve()
    except (OSError, RuntimeError):
        return False
    return where == there or (there.is_dir() and where.is_relative_to(there))


def _new_temp(folder: Path, name: str) -> Path:
    """Create an empty temp file in ``folder`` with ``FILE_MODE`` less the umask."""
    for _ in range(100):
        candidate = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            continue
        os.close(fd)
        return candidate
    raise FileExistsError(f"no free temporary name in {folder}")


@contextlib.contextmanager
def atomic_target(path: Path) -> Iterator[Path]:
    """A temp path beside ``path`` for the block to write; it replaces ``path`` at the end.

    The temp file lives in the same folder (so the rename cannot cross file systems), is
    fsynced before the rename, and is removed when the block or the rename fails: a crash or
    a full disk leaves the old file (or none), never a partial one. A target that exists and
    is not a regular file (a device, a pipe, a folder, a symlink) is refused
    (``OutputTargetError``); the new file has the old one's mode, else 0666 less the umask.

    Raises:
        OutputTargetError: the target is not a regular file.
    """
    check_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _new_temp(path.parent, path.name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):  # keep a mode the user chose
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        check_target(path)  # checked again just before the rename
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` all at once (text as UTF-8); see ``atomic_target``."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_target(path) as tmp:
        tmp.write_bytes(payload)


def open_regular(path: Path, what: str, error: type[FactDebateError] = SettingsError) -> BinaryIO:
    """Open ``path`` for reading only if it is a regular file (a symlink to one is followed).

    The file is opened without blocking and checked on the open handle, so a FIFO (which
    would wait forever for a writer) or a device is refused before a byte is read.

    Raises:
        error: the path is missing, a folder, a FIFO, a device or a socket, or cannot be
            opened, named as ``what PATH`` in one line.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"{what} {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device or a pipe)"
            raise error(f"{what} {path}: is {kind}; give a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded_bytes(
    path: Path, limit: int, what: str, error: type[FactDebateError] = SettingsError
) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them (see ``open_regular``).

    Raises:
        error: the file is not a regular file, cannot be read, or is larger than ``limit``.
    """
    with open_regular(Path(path), what, error) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise error(f"{what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{what} {path} is over {limit} bytes")
    return data


def read_bounded(
    path: Path, limit: int, what: str, error: type[FactDebateError] = SettingsError
) -> str:
    """The UTF-8 text of a regular file, at most ``limit`` bytes (FIFOs and devices refused).

    Raises:
        error: (default ``SettingsError``) the file is not a regular file, cannot be read, is
            larger than ``limit`` or is not UTF-8, named as ``what PATH`` in one line.
    """
    data = read_bounded_bytes(path, limit, what, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path}: not UTF-8 text ({exc.reason})") from None
