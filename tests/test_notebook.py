"""The quick-tour notebook executes top to bottom on the embedded default."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_quickstart_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FACTDEBATE_MODEL", "local")
    nb = nbformat.read(REPO / "notebooks" / "quickstart.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    ).execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "SUPPORTS consensus" in outputs  # the swapped-in model agrees with itself
    assert "consensus_check" in outputs
    assert os.environ["FACTDEBATE_HOME"] == str(tmp_path / "home")
