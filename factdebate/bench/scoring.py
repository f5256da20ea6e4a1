"""One result row per bench item: what the method predicted, whether it was right, its cost."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from factdebate.api import contract
from factdebate.bench.items import BenchItem
from factdebate.datasets import ANSWER_TASK
from factdebate.runs.folder import write_rows
from factdebate.runs.reader import read_result_rows
from factdebate.tools.core.secrets import redact, redact_deep
from factdebate.tools.scoring.answers import answer_scores

log = logging.getLogger("factdebate")
RESULTS = "results.jsonl"
"""The bench run folder's rows, one per finished item."""
FAILED = "error"
"""The ``stop_reason`` of an item whose run raised."""


def read_results(path: Path) -> list[dict[str, Any]]:
    """A bench run's valid rows (the first of each id), read only: the file is never changed.

    A damaged line (torn, not a row, out of bounds, a repeated id) is logged and left out;
    a command that must not count a run with damaged rows reads ``read_result_rows`` and
    decides (``RowsRead.checked``).
    """
    found = read_result_rows(path)
    for problem in found.problems:
        log.warning("left out: %s", problem)
    return found.rows


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


def prediction(out: dict[str, Any], task: str) -> Any:
    """What a run predicted: its verdict label, or (answers) its list of answers (None: none)."""
    if task == ANSWER_TASK:
        answers = out.get("answers")
        if out.get("verdict") is None or not isinstance(answers, list):
            return None  # no answer given (unreadable, or every model call failed)
        return list(answers)
    return out.get("verdict")


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


def correct(row: dict[str, Any], task: str) -> float:
    """1.0 for a right item: the gold label, or (answers) a strict exact match."""
    if task == ANSWER_TASK:
        scores = answer_scores(row.get("prediction") or [], row["gold"], row.get("wrong") or [])
        return scores["exact_match"]
    return float(row.get("prediction") == row["gold"])


def llm_calls(row: dict[str, Any]) -> int:
    """The row's total LLM calls."""
    return int((row.get("cost") or {}).get("total", {}).get("llm_calls", 0))


def tokens(row: dict[str, Any]) -> int:
    """The row's total input and output tokens."""
    total = (row.get("cost") or {}).get("total", {})
    return int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))
