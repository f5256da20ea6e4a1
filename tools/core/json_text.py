"""Read JSON text from files and arguments: any depth or size fails as one readable line."""

from __future__ import annotations

import json
from typing import Any

TOO_DEEP = "nested too deeply to read"


def parse_json(text: str | bytes) -> Any:
    """``json.loads(text)``, with nesting too deep to read raised as a ``JSONDecodeError``.

    Python's parser recurses once per nested array or object and raises ``RecursionError``
    (a traceback, not a bad-input message) about a thousand levels down; here that is one more
    ``JSONDecodeError``, so every caller's ``except json.JSONDecodeError`` covers it.

    Raises:
        json.JSONDecodeError: the text is not JSON, or is nested too deeply.
    """
    try:
        return json.loads(text)
    except RecursionError:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError(TOO_DEEP, shown, 0) from None


def json_problem(exc: json.JSONDecodeError, *, line: bool = True) -> str:
    """What is wrong with the text and where: ``Expecting ',' delimiter at line 1, column 9``.

    ``line``: name the line too (a whole file; one JSONL record is one line). Some of the
    parser's messages end in ``at`` themselves (``Invalid control character at``); the place
    is added once.
    """
    if exc.msg == TOO_DEEP:
        return TOO_DEEP
    message = exc.msg.removesuffix(" at")
    where = f"line {exc.lineno}, column {exc.colno}" if line else f"column {exc.colno}"
    return f"{message} at {where}"
