"""Atomic file rewrites: write a temp file beside the target, fsync it, rename it over."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_target(path: Path) -> Iterator[Path]:
    """A temp path beside ``path`` for the block to write; it replaces ``path`` at the end.

    The temp file lives in the same folder (so the rename cannot cross file systems), is
    fsynced before the rename, and is removed when the block or the rename fails: a crash or
    a full disk leaves the old file (or none), never a partial one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
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
