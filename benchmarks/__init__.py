"""Benchmarks run by make targets (not by the test suite): speed and its raw baselines."""

from __future__ import annotations

import sys
from collections.abc import Callable


def run_main(main: Callable[[], None]) -> None:
    """Run a script's ``main``; recorded data it cannot find is one line, not a traceback.

    The replays read ``../shared/recorded`` through ``tests.capable``, which skips a test when
    the recordings are absent; outside pytest that skip would surface as a traceback.
    """
    from _pytest.outcomes import Skipped

    try:
        main()
    except Skipped as exc:
        sys.exit(f"cannot run {sys.argv[0]}: {exc.msg}")
