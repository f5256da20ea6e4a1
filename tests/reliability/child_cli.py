"""The command line in a child process under a 3 GB memory cap, and its one-line exit."""

from __future__ import annotations

import sys
from typing import Any

from tests.bounded import COMMAND_GUARD_S, run_bounded
from tests.conftest import REPO

CLI_UNDER_A_MEMORY_LIMIT = """
import resource, sys
limit = 3 * 1024**3  # an unbounded read runs into this instead of the machine's memory
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from factdebate.cli import app
app(sys.argv[1:])
"""


def run_cli_limited(args: list[str], stdin: Any = None) -> Any:
    return run_bounded(
        [sys.executable, "-c", CLI_UNDER_A_MEMORY_LIMIT, *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        what="the CLI under a memory limit",
        guard_s=COMMAND_GUARD_S,
        cwd=REPO,
    )


def one_line_exit(code: int, output: str, message: str) -> None:
    """Exit code 2 and ``message`` within three lines: a refusal, never a traceback."""
    assert code == 2, output
    assert message in output, output
    assert "Traceback" not in output
    assert len(output.strip().splitlines()) <= 3, output
