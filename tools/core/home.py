"""The data home: where indexes, converted weights and caches live (``FACTDEBATE_HOME``)."""

from __future__ import annotations

import os
from pathlib import Path


def home_dir() -> Path:
    """The data home's path (``FACTDEBATE_HOME``, else ``~/.cache/factdebate``), not created."""
    return Path(os.environ.get("FACTDEBATE_HOME") or Path.home() / ".cache" / "factdebate")


def data_home() -> Path:
    """Directory holding indexes (``FACTDEBATE_HOME``, else ``~/.cache/factdebate``)."""
    path = home_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path
