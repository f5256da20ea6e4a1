"""The data home: where indexes, converted weights and caches live (``FACTDEBATE_HOME``)."""

from __future__ import annotations

import os
from pathlib import Path

from factdebate.tools.core.errors import FactDebateError


def home_dir() -> Path:
    """The data home's path (``FACTDEBATE_HOME``, else ``~/.cache/factdebate``), not created."""
    return Path(os.environ.get("FACTDEBATE_HOME") or Path.home() / ".cache" / "factdebate")


class HomeError(FactDebateError, OSError):
    """The data home cannot be created (a read-only file system, no permission, a file)."""


def data_home() -> Path:
    """Directory holding indexes (``FACTDEBATE_HOME``, else ``~/.cache/factdebate``), made.

    Raises:
        HomeError: it cannot be created, in one line with the cause.
    """
    path = home_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise HomeError(
            f"cannot create the data home {path} ({why}): set FACTDEBATE_HOME to a writable folder"
        ) from exc
    return path
