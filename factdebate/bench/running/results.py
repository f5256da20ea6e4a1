"""Writing a bench run's result rows: one per finished or failed item, repaired on resume."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from factdebate.api import contract
from factdebate.bench.judging.scoring import FAILED, prediction
from factdebate.bench.running.items import BenchItem
from factdebate.runs.folder import write_rows
from factdebate.runs.reader import read_result_rows
from factdebate.tools.core.secrets import redact, redact_deep

log = logging.getLogger("factdebate")


def result_row(item: BenchItem, out: dict[str, Any], latency: float, task: str) -> dict[str, Any]:
    """The results.jsonl row of a finished item, its whole result contract under ``result``."""
    out = redact_deep(out)  # a reply echoing a key must not reach results.jsonl
    return {
        "id": item.id,
        **item.text(),
        "gold": item.gold,
        **item.extra,
        "prediction": prediction(out, task),
        "stop_reason": out.get("stop_reason"),
        "rounds": out.get("rounds"),
        "cost": out.get("cost") or {},
        "latency_s": round(latency, 4),
        "errors": out.get("errors") or [],
        **({"review": out["review"]} if out.get("review") else {}),
        "result": contract(out),
    }


def failed_row(item: BenchItem, exc: BaseException, latency: float) -> dict[str, Any]:
    """The row of an item whose run raised: no prediction, no result, the exception as its error."""
    message = redact(f"{type(exc).__name__}: {exc}")[:2000]
    return {
        "id": item.id,
        **item.text(),
        "gold": item.gold,
        **item.extra,
        "prediction": None,
        "stop_reason": FAILED,
        "rounds": 0,
        "cost": {},
        "latency_s": round(latency, 4),
        "errors": [{"kind": "exception", "stage": "run", "message": message}],
        "result": None,
    }


def repair_results(path: Path) -> list[dict[str, Any]]:
    """Bench resume only, its folder's one writer (hold ``rows_lock``): the rows, file repaired.

    A torn last line (a killed write), a line that is not a valid row (its item runs again)
    and a repeated id are dropped, each logged, and the file is rewritten without them,
    ending in a newline, so the rows the resumed run appends stay one per line.
    """
    found = read_result_rows(path)
    for problem in found.problems:
        log.warning("dropped before resuming: %s", problem)
    if found.problems or (path.is_file() and not _ends_in_newline(path)):
        write_rows(path, found.rows)
    return found.rows


def _ends_in_newline(path: Path) -> bool:
    """Whether a non-empty file's last byte is a newline (an empty file counts as ending so)."""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        if handle.tell() == 0:
            return True
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"
