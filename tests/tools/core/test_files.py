"""Bounded reads of the small files a user names (prices, measured tables, run metrics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import read_bounded


def test_bounded_read_refuses_large_missing_and_non_utf8_files(tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    assert read_bounded(path, 8, "table") == '{"a": 1}'
    with pytest.raises(SettingsError, match=r"table .*table.json is over 7 bytes"):
        read_bounded(path, 7, "table")
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(SettingsError, match="not UTF-8 text"):
        read_bounded(path, 8, "table")
    with pytest.raises(SettingsError, match="table .*missing.json: No such file"):
        read_bounded(tmp_path / "missing.json", 8, "table")
