"""The data home: where indexes, converted weights and caches live (``FACTDEBATE_HOME``)."""

from __future__ import annotations

import os
from pathlib import Path


def data_home() -> Path:
    """Directory holding indexes (``FACTDEBATE_HOME``, else ``~/.cache/factdebate``)."""
    home = os.environ.get("FACTDEBATE_HOME") or Path.home() / ".cache" / "factdebate"
    path = Path(home)
    path.mkdir(parents=True, exist_ok=True)
    return path
