"""A bench run's result rows read and scored: what each item predicted, whether right, its cost."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from factdebate.datasets import ANSWER_TASK
from factdebate.runs.reader import read_result_rows
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


def prediction(out: dict[str, Any], task: str) -> Any:
    """What a run predicted: its verdict label, or (answers) its list of answers (None: none)."""
    if task == ANSWER_TASK:
        answers = out.get("answers")
        if out.get("verdict") is None or not isinstance(answers, list):
            return None  # no answer given (unreadable, or every model call failed)
        return list(answers)
    return out.get("verdict")


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
