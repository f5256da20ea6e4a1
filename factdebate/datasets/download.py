"""Downloading a dataset's official files: resumable, bounded in time, checked against SHA-256.

A partial download is kept as ``FILE.part`` and resumed with an HTTP range request, within
the same command (a connection closed mid-body is retried while it makes progress) and by
the next one. Every file under the datasets folder is opened relative to a folder handle
and without following links (``O_NOFOLLOW``), so a symlink planted there is refused rather
than written through. A download that outlives its deadline or falls under the minimum rate
is cut, its partial file kept.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import http.client
import os
import stat
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factdebate.datasets.records import DatasetError
from factdebate.tools.core.errors import FactDebateError

MIRROR_ENV = "FACTDEBATE_DATASETS_MIRROR"
"""A base URL that serves the official files under their own paths (an offline mirror)."""

CHUNK = 1 << 16
TIMEOUT_S = 60.0
"""Longest wait for a connection or for the next bytes (never past the deadline)."""
ATTEMPTS = 5
"""Connections tried for one file while each brings new bytes (a dropped one is resumed)."""
RATE_WINDOW_S = 30.0
"""The minimum rate is measured over this window, once the window has passed."""
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Progress = Callable[[int, int], None]
"""Called with (bytes so far, bytes expected) while a file downloads."""


@dataclass(frozen=True)
class Download:
    """One file of an official release: where it is, what it is called here, its digest."""

    url: str
    file: str
    sha256: str
    size: int


class Limits(BaseModel):
    """How long one ``datasets get`` may take: an overall deadline and a minimum rate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deadline_s: Annotated[float, Field(gt=0, le=7 * 24 * 3600, allow_inf_nan=False)] = 3 * 3600.0
    """Seconds for the whole command (every file, every retry)."""
    min_rate: Annotated[int, Field(ge=0, le=10 * 1024**3)] = 1024
    """Bytes a second below which a download is cut (0: no minimum), over ``RATE_WINDOW_S``."""


def limits(deadline_s: float | None = None, min_rate: int | None = None) -> Limits:
    """The download limits with the given values checked (``None``: the default).

    Raises:
        DatasetError: a value out of bounds, in one line.
    """
    given: dict[str, object] = {"deadline_s": deadline_s, "min_rate": min_rate}
    try:
        return Limits.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        error = exc.errors()[0]
        name = "--deadline" if error["loc"][0] == "deadline_s" else "--min-rate"
        raise DatasetError(f"{name}: {error['msg']}") from None


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` as served by ``mirror`` (same path under the mirror's base), or as it is."""
    if not mirror:
        return url
    return mirror.rstrip("/") + urllib.parse.urlsplit(url).path


def _one_line(text: object) -> str:
    return " ".join(str(text).split())[:300]


def open_folder(root: Path, parts: tuple[str, ...]) -> int:
    """A handle on ``root/parts...``, made as needed, no link followed below ``root``.

    Raises:
        DatasetError: ``root`` is not a folder, or a part under it is a link or a file.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except (FileExistsError, NotADirectoryError):
        raise DatasetError(
            f"the datasets folder {root} is not a folder (FACTDEBATE_DATASETS names a file?)"
        ) from None
    except OSError as exc:
        raise DatasetError(f"the datasets folder {root}: {exc.strerror or exc}") from None
    where = root
    for part in parts:
        where = where / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, 0o777, dir_fd=fd)
        try:
            child = os.open(part, os.O_RDONLY | _DIRECTORY | _NO_FOLLOW | _CLOEXEC, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            why = "a link or not a folder" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else ""
            raise DatasetError(
                f"{where}: {why or exc.strerror}: refused (remove it and run the command again)"
            ) from None
        os.close(fd)
        fd = child
    return fd


def _kind(folder_fd: int, name: str) -> int | None:
    """The mode of ``name`` in the folder (not following a link), None when there is none."""
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _open_file(folder_fd: int, name: str, flags: int, where: Path) -> int:
    """Open ``name`` in the folder without following a link; a link or a device is refused."""
    try:
        fd = os.open(name, flags | _NO_FOLLOW | _CLOEXEC | os.O_NONBLOCK, 0o666, dir_fd=folder_fd)
    except OSError as exc:
        why = "is a link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise DatasetError(
            f"{where}: {why}: refused (remove it and run the command again)"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DatasetError(f"{where}: not a regular file: refused (remove it and run again)")
    os.set_blocking(fd, True)
    return fd


def _digest(folder_fd: int, name: str, where: Path) -> str:
    sha = hashlib.sha256()
    with os.fdopen(_open_file(folder_fd, name, os.O_RDONLY, where), "rb") as handle:
        while block := handle.read(CHUNK):
            sha.update(block)
    return sha.hexdigest()


class _Cut(FactDebateError):
    """The transfer stopped before the file was whole (kept to resume): why, in words."""


class Clock:
    """The command's deadline and the rate check over a sliding window."""

    def __init__(self, bounds: Limits) -> None:
        self.bounds = bounds
        self.end = time.monotonic() + bounds.deadline_s
        self.marks: list[tuple[float, int]] = []

    def remaining(self) -> float:
        """Seconds left before the deadline."""
        return self.end - time.monotonic()

    def check(self, total: int) -> None:
        """Raise ``_Cut`` when the deadline passed or the recent rate is under the minimum."""
        at = time.monotonic()
        if at >= self.end:
            raise _Cut(f"the deadline of {self.bounds.deadline_s:g} s passed (--deadline)")
        self.marks.append((at, total))
        while len(self.marks) > 1 and at - self.marks[1][0] >= RATE_WINDOW_S:
            self.marks.pop(0)
        start, before = self.marks[0]
        if self.bounds.min_rate and at - start >= RATE_WINDOW_S:
            rate = (total - before) / (at - start)
            if rate < self.bounds.min_rate:
                raise _Cut(
                    f"{rate:.0f} bytes/s over {at - start:.0f} s, under the minimum "
                    f"{self.bounds.min_rate} (--min-rate)"
                )


def _chunks(answer: http.client.HTTPResponse, clock: Clock, have: int) -> Iterator[bytes]:
    """The body's bytes as they come (``read1``: a slow server cannot hold one read long)."""
    while True:
        clock.check(have)
        block = answer.read1(CHUNK)
        if not block:
            return
        have += len(block)
        yield block


def _transfer(
    url: str, item: Download, folder_fd: int, part: Path, clock: Clock, progress: Progress
) -> None:
    """Fetch the rest of ``part`` from ``url``; ``_Cut`` when the connection ends too soon."""
    kind = _kind(folder_fd, part.name)
    have = (
        0 if kind is None else os.stat(part.name, dir_fd=folder_fd, follow_symlinks=False).st_size
    )
    if kind is not None and not stat.S_ISREG(kind):
        raise DatasetError(f"{part}: is a link or not a regular file: refused (remove it)")
    have = _size(folder_fd, part.name)
    if have > item.size:
        os.unlink(part.name, dir_fd=folder_fd)
        have = 0
    if have == item.size:
        return
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    timeout = max(0.5, min(TIMEOUT_S, clock.remaining()))
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        if have and answer.status != 206:  # the server ignored the range: start over
            have = 0
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if have else os.O_TRUNC)
        with os.fdopen(_open_file(folder_fd, part.name, flags, part), "wb") as out:
            progress(have, item.size)
            try:
                for block in _chunks(answer, clock, have):
                    block = block[: item.size - have]
                    out.write(block)
                    have += len(block)
                    progress(have, item.size)
                    if have >= item.size:
                        break
            except (http.client.IncompleteRead, ConnectionError, TimeoutError):
                pass  # as a connection closed early: resumed from what arrived
    if have < item.size:
        raise _Cut(f"the connection closed at {have} of {item.size} bytes")


def _why(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        if exc.code in (301, 302, 303, 307, 308):
            return f"too many redirects (HTTP {exc.code})"
        return f"HTTP {exc.code} {exc.reason}"
    return _one_line(getattr(exc, "reason", None) or exc)


def fetch(
    item: Download,
    folder: Path,
    mirror: str | None,
    progress: Progress,
    clock: Clock | None = None,
    root: Path | None = None,
) -> bool:
    """Download ``item`` into ``folder``; False when a checked copy is already there.

    ``clock`` holds the command's deadline and minimum rate (default ``Limits()``); ``root``
    is the datasets folder: nothing under it is reached through a link. A dropped
    connection is resumed (up to ``ATTEMPTS`` while each brings bytes); the file takes its
    name only once its size and SHA-256 match the catalog's.

    Raises:
        DatasetError: the server cannot be reached, answers an error, is cut (deadline,
            rate), or the bytes are not the release's (the partial file is removed then);
            a link or a non-regular file where a file goes. One line each.
    """
    clock = clock or Clock(Limits())
    base = root if root is not None and folder.is_relative_to(root) else folder
    folder_fd = open_folder(base, folder.relative_to(base).parts)
    try:
        return _fetch_in(item, folder, folder_fd, mirror, progress, clock)
    finally:
        os.close(folder_fd)


def _fetch_in(
    item: Download,
    folder: Path,
    folder_fd: int,
    mirror: str | None,
    progress: Progress,
    clock: Clock,
) -> bool:
    target = folder / item.file
    part = target.with_name(target.name + ".part")
    kind = _kind(folder_fd, target.name)
    if kind is not None and stat.S_ISREG(kind):
        size = os.stat(target.name, dir_fd=folder_fd, follow_symlinks=False).st_size
        if size == item.size and _digest(folder_fd, target.name, target) == item.sha256:
            return False
    elif kind is not None:
        raise DatasetError(f"{target}: is a link or not a regular file: refused (remove it)")
    url = mirrored(item.url, mirror)
    resume = "the partial file is kept: run the command again to resume"
    for attempt in range(1, ATTEMPTS + 1):
        before = _size(folder_fd, part.name)
        try:
            _transfer(url, item, folder_fd, part, clock, progress)
            break
        except _Cut as exc:
            grew = _size(folder_fd, part.name) > before
            if attempt == ATTEMPTS or not grew or "connection closed" not in str(exc):
                raise DatasetError(f"cannot download {url}: {exc}; {resume}") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            raise DatasetError(
                f"cannot download {url}: {_why(exc)}; {resume}, or give --mirror URL (a "
                "server holding the official files under the same paths, docs/datasets.md)"
            ) from None
    if _digest(folder_fd, part.name, part) != item.sha256:
        os.unlink(part.name, dir_fd=folder_fd)
        raise DatasetError(
            f"{url}: the download is not the release's file (size or SHA-256 differs); "
            "it was removed"
        )
    os.replace(part.name, target.name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    return True


def _size(folder_fd: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_size
    except FileNotFoundError:
        return 0
