"""The notebooks execute top to bottom: one per method on scripted models, the quick tour."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.bounded import MODEL_GUARD_S
from tests.conftest import REPO


def execute(name: str, tmp_path: Path) -> tuple[str, str]:
    """Run a notebook in a fresh kernel; return its text outputs and its HTML outputs."""
    nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
    NotebookClient(
        nb,
        timeout=int(MODEL_GUARD_S),  # per cell: a hang guard, the cells are bounded by their work
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs)
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    return text, html


@pytest.fixture
def notebook_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kernel runs outside the repository with only the installed package (no ``tests``,
    no top-level folders on its path) and writes only under ``tmp_path``."""
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return tmp_path


NOT_INSTALLED = re.compile(r"^\s*(?:from|import)\s+(tests|tools|nodes|graphs|prompts)\b", re.M)


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_import_only_the_installed_package(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert NOT_INSTALLED.findall(code) == [], path.name


# (notebook, what its printed output must show, what its inline debate page must show)
METHOD_NOTEBOOKS = [
    (
        "tool_mad.ipynb",
        ["SUPPORTS consensus 1", "page written: True"],
        ["Round 1", "debater_a", "threshold 0.70"],
    ),
    ("madam_rag.ipynb", ["['1963', '1956'] answers_stable 2"], ["document fake", "aggregator"]),
    (
        "debate_cv.ipynb",
        ["SUPPORTS moderator 2", "correct 1, corrected 1; sft 1, dpo 1"],
        ["moderator</b>: go on", "Round 2"],
    ),
    (
        "mad_fact.ipynb",
        ["TRUE 3 The Eiffel Tower is in Paris.", "FALSE 1 The Eiffel Tower is made of wood."],
        ["Claim 3: The Eiffel Tower is made of wood.", "general_public"],
    ),
]


@pytest.mark.parametrize(("name", "printed", "shown"), METHOD_NOTEBOOKS)
def test_method_notebook_runs_and_shows_its_debate_page(
    name: str, printed: list[str], shown: list[str], notebook_env: Path
):
    text, html = execute(name, notebook_env)
    for expected in printed:
        assert expected in text, text
    assert html.startswith("<iframe srcdoc=") and "&lt;!doctype html&gt;" in html
    page = __import__("html").unescape(html)
    for expected in shown:
        assert expected in page, expected


@pytest.mark.slow
def test_quickstart_notebook_runs(notebook_env: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FACTDEBATE_MODEL", "local")
    text, _ = execute("quickstart.ipynb", REPO)
    assert "SUPPORTS consensus" in text  # the swapped-in model agrees with itself
    assert "consensus_check" in text
