"""Console output of every command: the two consoles, one-line failures, markdown, pages."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
from rich.markup import escape

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.secrets import redact, redact_deep
from factdebate.tools.core.terminal import SafeConsole

T = TypeVar("T")


def run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``, imported by a command that runs, never by a refusal."""
    import asyncio

    return asyncio.run(coroutine)


out = SafeConsole(highlight=False)  # strips escape sequences from model and document text
err = SafeConsole(stderr=True, highlight=False)


def print_markdown(text: str) -> None:
    """Print a markdown report as it is: no markup, no wrapping (a wrapped table breaks)."""
    out.print(text, markup=False, soft_wrap=True)


def print_json(value: Any, *, ascii_only: bool = False) -> None:
    """Print ``value`` as one JSON line on stdout, every string in it redacted."""
    text = json.dumps(redact_deep(value), ensure_ascii=ascii_only, default=str)
    sys.stdout.write(text + "\n")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error (secrets redacted) and exit non-zero (no traceback)."""
    message = redact(message)
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def save_page(write: Callable[[], Path], quiet: bool = False, what: str = "debate page") -> None:
    """Write a report page and print its path (on stderr when ``quiet``: --json stays clean)."""
    try:
        path = write()
    except FactDebateError as exc:
        fail(str(exc))
    (err if quiet else out).print(f"{what}: {path.resolve()}", markup=False, soft_wrap=True)
