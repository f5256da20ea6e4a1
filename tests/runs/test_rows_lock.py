"""The rows lock leaves no lock file behind and still admits one writer at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from factdebate.runs.folder import RowsBusyError, append_rows, check_rows_free, rows_lock


def test_no_lock_file_is_left_in_the_run_folder(tmp_path: Path) -> None:
    rows = tmp_path / "results.jsonl"
    with append_rows(rows) as sink:
        sink.add({"id": "1"})
        assert (tmp_path / ".results.jsonl.lock").is_file()
    check_rows_free(rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl"]


def test_a_waiter_on_a_removed_lock_file_still_excludes_a_newcomer(tmp_path: Path) -> None:
    """A holds; B waits on A's lock file; A ends (the file goes); while B holds, C is refused."""
    rows = tmp_path / "results.jsonl"
    b_holds, b_may_end, events = threading.Event(), threading.Event(), []

    def writer_b() -> None:
        with rows_lock(rows, wait=True):
            events.append("b")
            b_holds.set()
            b_may_end.wait(10)

    with rows_lock(rows, wait=False):
        waiter = threading.Thread(target=writer_b)
        waiter.start()
        time.sleep(0.3)  # B has opened the same lock file and waits on it
        assert events == []
    assert b_holds.wait(10)
    try:
        with pytest.raises(RowsBusyError), rows_lock(rows, wait=False):
            pass  # C: the path's new lock file is B's
        with pytest.raises(RowsBusyError):
            check_rows_free(rows)
    finally:
        b_may_end.set()
        waiter.join(10)
    with rows_lock(rows, wait=False):  # free again once B is done
        pass
    assert not (tmp_path / ".results.jsonl.lock").exists()
