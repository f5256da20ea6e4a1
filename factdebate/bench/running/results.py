"""Writing a bench run's result rows: one per finished or failed item, repaired on resume.

A failed item's row is set aside into ``retried.jsonl`` when a rerun retries the item: the new
try's row takes its place, and the old row's cost (calls paid for) still counts in the run's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factdebate.api import contract
from factdebate.bench.judging.scoring import FAILED, RESULTS, prediction
from factdebate.bench.running.items import BenchItem
from factdebate.runs.folder import append_rows, write_rows
from factdebate.runs.reader import read_result_rows
from factdebate.tools.core.json_text import parse_json
from factdebate.tools.core.secrets import redact, redact_deep

log = logging.getLogger("factdebate")
RETRIED = "retried.jsonl"
"""Rows of failed items that a rerun retried: kept for their cost, never scored."""
MAX_RETRIED_BYTES = 256 << 20
"""Largest ``retried.jsonl`` read back; a larger one is left out of the cost, logged."""


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


def set_aside(folder: Path, rows: list[dict[str, Any]], retried: Sequence[dict[str, Any]]) -> None:
    """Move the ``retried`` rows out of ``results.jsonl`` into ``retried.jsonl`` (hold its lock).

    ``rows`` are the file's rows; the file is rewritten with the others. The set-aside rows are
    appended (flushed) first: a kill between the two steps leaves a row in both files, which
    ``retried_rows`` reads once.
    """
    if not retried:
        return
    with append_rows(folder / RETRIED) as sink:
        for row in retried:
            sink.add(row)
    gone = {id(row) for row in retried}
    write_rows(folder / RESULTS, [row for row in rows if id(row) not in gone])


def retried_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows ``set_aside`` kept, each once (a whole repeated line once); [] when none."""
    path = folder / RETRIED
    if not path.is_file():
        return []
    if path.stat().st_size > MAX_RETRIED_BYTES:
        log.warning(
            "%s: over %d bytes, its calls are left out of the cost", path, MAX_RETRIED_BYTES
        )
        return []
    seen: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        try:
            row = parse_json(line) if line.strip() else None
        except json.JSONDecodeError:
            row = None  # a torn last line
        if isinstance(row, dict):
            seen.setdefault(json.dumps(row, sort_keys=True), row)
    return list(seen.values())
