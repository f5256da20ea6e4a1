"""The documentation site: a strict MkDocs build, generated diagrams and settings, in Chromium."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.chromium import opener, visible
from tests.conftest import REPO


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists():
        pytest.skip("mkdocs is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(target)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return target


def test_every_method_page_has_its_generated_graph_and_settings(site: Path) -> None:
    from factdebate.graphs.registry import load_method
    from factdebate.settings import context_class

    for method in ("tool-mad", "madam-rag", "debate-cv", "mad-fact"):
        page = (site / "methods" / f"{method}.html").read_text(encoding="utf-8")
        assert '<pre class="mermaid">' in page, method
        nodes = load_method(method)[0].get_graph().nodes
        assert all(name in page for name in nodes if not name.startswith("__")), method
        assert all(f"| {name} |" in page for name in nodes), method  # the text layout
        for field in context_class(method).__dataclass_fields__:
            assert f"<code>{field}</code>" in page, (method, field)


def test_cli_reference_is_generated_from_the_cli(site: Path) -> None:
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for command in ("verify", "bench", "settings", "replay", "history", "review"):
        assert f"factdebate {command}" in page


def test_index_and_a_method_page_render_in_chromium(site: Path, tmp_path: Path) -> None:
    open_page = opener(tmp_path)
    index = open_page(site / "index.html", tmp_path / "index.png")
    text, _ = visible(index)
    assert "factdebate" in text and "Tool-MAD" in text
    assert 'href="methods/tool-mad.html"' in index  # pages open from the file system
    page = open_page(site / "methods" / "tool-mad.html", tmp_path / "tool-mad.png")
    # The diagram's Mermaid source: Material's script takes the page's `pre.mermaid` over and
    # draws it with mermaid.js from a CDN when online; offline the source stays readable.
    text, tags = visible(page)
    assert "graph TD;" in text
    assert "consensus_check -.-> judge" in text and "human_review" in text
    assert "faithfulness_threshold" in text and "table" in tags


def test_readme_stays_a_guide_and_its_example_files_exist() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300, "the README is a short guide; long text goes to docs/"
    pages = [readme] + [p.read_text(encoding="utf-8") for p in (REPO / "docs").rglob("*.md")]
    named = {m for text in pages for m in re.findall(r"\bexamples/[\w.-]+", text)}
    assert "examples/docs.jsonl" in named
    assert [name for name in sorted(named) if not (REPO / name).is_file()] == []
    links = re.findall(r"\]\(((?:docs/)[^)#]+)", readme)
    assert links and [link for link in links if not (REPO / link).is_file()] == []
