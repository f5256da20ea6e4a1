"""Downloading a dataset's official files: resumable, size-capped, checked against SHA-256."""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factdebate.datasets.records import DatasetError

MIRROR_ENV = "FACTDEBATE_DATASETS_MIRROR"
"""A base URL that serves the official files under their own paths (an offline mirror)."""

CHUNK = 1 << 16
TIMEOUT_S = 60.0

Progress = Callable[[int, int], None]
"""Called with (bytes so far, bytes expected) while a file downloads."""


@dataclass(frozen=True)
class Download:
    """One file of an official release: where it is, what it is called here, its digest."""

    url: str
    file: str
    sha256: str
    size: int


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` as served by ``mirror`` (same path under the mirror's base), or as it is."""
    if not mirror:
        return url
    return mirror.rstrip("/") + urllib.parse.urlsplit(url).path


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            sha.update(block)
    return sha.hexdigest()


def fetch(item: Download, folder: Path, mirror: str | None, progress: Progress) -> bool:
    """Download ``item`` into ``folder``; False when a checked copy is already there.

    A partial download is kept as ``FILE.part`` and resumed with an HTTP range request; the
    file takes its name only once its size and SHA-256 match the catalog's.

    Raises:
        DatasetError: If the server cannot be reached or answers an error, or the bytes are
            not the release's (the partial file is removed then).

    """
    target = folder / item.file
    if target.is_file() and target.stat().st_size == item.size and _digest(target) == item.sha256:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    have = part.stat().st_size if part.is_file() else 0
    if have > item.size:
        part.unlink()
        have = 0
    url = mirrored(item.url, mirror)
    if have < item.size:
        request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                if have and answer.status != 206:  # the server ignored the range: start over
                    have = 0
                with part.open("ab" if have else "wb") as out:
                    progress(have, item.size)
                    while have < item.size and (block := answer.read(CHUNK)):
                        block = block[: item.size - have]
                        out.write(block)
                        have += len(block)
                        progress(have, item.size)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise DatasetError(
                f"cannot download {url}: {reason} (run the command again to resume)"
            ) from None
    if have != item.size or _digest(part) != item.sha256:
        part.unlink(missing_ok=True)
        raise DatasetError(
            f"{url}: the download is not the release's file (size or SHA-256 differs); "
            "it was removed"
        )
    os.replace(part, target)
    return True
