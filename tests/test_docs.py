"""The documentation site: a strict MkDocs build, generated diagrams and settings, in Chromium."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.bounded import COMMAND_GUARD_S, run_bounded
from tests.chromium import NO_NETWORK, opener, visible
from tests.conftest import REPO


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists():
        pytest.skip("mkdocs is not installed (pip install -e '.[dev]')")
    # Only the venv's programs on PATH: the graphs are drawn with no system tool (no Graphviz).
    path = str(mkdocs.parent)
    assert shutil.which("dot", path=path) is None
    done = run_bounded(
        [str(mkdocs), "build", "--strict", "--site-dir", str(target)],
        cwd=REPO,
        capture_output=True,
        text=True,
        what="mkdocs build",
        guard_s=COMMAND_GUARD_S,
        env={**os.environ, "PATH": path},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return target


def test_every_method_page_has_its_generated_graph_and_settings(site: Path) -> None:
    from factdebate.graphs.registry import load_method
    from factdebate.settings import context_class

    for method in ("tool-mad", "madam-rag", "debate-cv", "mad-fact"):
        page = (site / "methods" / f"{method}.html").read_text(encoding="utf-8")
        assert "mermaid" not in page, method  # drawn at build time: nothing for a CDN to draw
        drawn = load_method(method)[0].get_graph()
        svg = page[page.index('<div class="graph-drawing">') :]
        svg = svg[: svg.index("</svg>")]
        for name in drawn.nodes:
            assert f"<title>{name}</title>" in svg, (
                method,
                name,
            )  # each node's group is titled with its name
        assert svg.count('class="edge"') == len(drawn.edges), method
        for edge in drawn.edges:  # the edges as text, under the drawing
            arrow = "-.-&gt;" if edge.conditional else "--&gt;"
            target = {"__end__": "end"}.get(edge.target, edge.target)
            assert f" {arrow} {target}" in page, (method, edge)
        for field in context_class(method).__dataclass_fields__:
            assert f"<code>{field}</code>" in page, (method, field)


def test_cli_reference_is_generated_from_the_cli(site: Path) -> None:
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for command in ("verify", "bench", "settings", "replay", "history", "review"):
        assert f"factdebate {command}" in page


def test_index_and_a_method_page_render_in_chromium(site: Path, tmp_path: Path) -> None:
    open_page = opener(tmp_path, NO_NETWORK)
    index = open_page(site / "index.html", tmp_path / "index.png")
    text, _ = visible(index)
    assert "factdebate" in text and "Tool-MAD" in text
    assert 'href="methods/tool-mad.html"' in index  # pages open from the file system
    page = open_page(site / "methods" / "tool-mad.html", tmp_path / "tool-mad.png")
    text, tags = visible(page)
    assert "consensus_check -.-> judge" in text and "human_review" in text  # edges as text
    assert "faithfulness_threshold" in text and "table" in tags


# Appended to a copy of a built page: measures what the browser laid out, into the DOM.
PROBE = """<script>
const svg = document.querySelector(".graph-drawing svg");
const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
const arrows = svg ? [...svg.querySelectorAll("g.edge")].filter(
  (g) => g.querySelector("path") && g.querySelector("polygon")).length : 0;
const names = [...document.querySelectorAll(".settings-table td:first-child code")];
const broken = names.filter((c) => c.getClientRects().length > 1 ||
  c.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(c).lineHeight || 20));
document.body.insertAdjacentHTML("beforeend", `<p id="probe">drawn ${Math.round(box.width)}x${
  Math.round(box.height)} nodes ${svg ? svg.querySelectorAll("g.node").length : 0} arrows ${
  arrows} names ${names.length} broken ${broken.map((c) => c.textContent).join(",") || "none"
  }</p>`);
</script>"""


def test_method_page_draws_its_graph_offline_in_chromium(site: Path, tmp_path: Path) -> None:
    """Opened from the file system with no network, the page shows the graph drawn as SVG."""
    from factdebate.graphs.registry import load_method

    built = (site / "methods" / "madam-rag.html").read_text(encoding="utf-8")
    probe = site / "methods" / "probe-madam-rag.html"  # beside it: the same relative assets
    probe.write_text(built.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    try:
        dom = opener(tmp_path, NO_NETWORK)(probe, tmp_path / "madam-rag.png", "1280,3000")
    finally:
        probe.unlink()
    found = re.search(
        r"drawn (\d+)x(\d+) nodes (\d+) arrows (\d+) names (\d+) broken ([^<\s]+)", dom
    )
    assert found, dom[-2000:]
    width, height, nodes, arrows, names, broken = found.groups()
    drawn = load_method("madam-rag")[0].get_graph()
    assert int(width) > 100 and int(height) > 200  # laid out, not an empty box
    assert int(nodes) == len(drawn.nodes) and int(arrows) == len(drawn.edges)
    assert int(names) > 10 and broken == "none"  # setting names are never cut mid-word


# Types a word into the search field once the page has loaded, then writes what it found, and
# the code blocks whose lines are wider than their box, into the DOM.
SEARCH_PROBE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const input = document.querySelector("input.md-search__input");
  const clipped = [...document.querySelectorAll("pre > code")].filter(
    (c) => c.scrollWidth > c.clientWidth + 1).length;
  input.focus();
  input.value = "Milvus";
  input.dispatchEvent(new Event("input", {bubbles: true}));
  input.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true, key: "s"}));
  setTimeout(() => {
    const shown = document.querySelector("[data-md-component=search]").hidden ? "hidden" : "shown";
    const found = document.querySelectorAll(".md-search-result__item").length;
    document.body.insertAdjacentHTML("beforeend",
      `<p id="probe">field ${shown} found ${found} clipped ${clipped}</p>`);
  }, 1500);
}, 500));
</script>"""


def test_index_page_searches_offline_and_shows_its_code_whole(site: Path, tmp_path: Path) -> None:
    """From the file system with no network: search answers, and no code block is clipped."""
    built = (site / "index.html").read_text(encoding="utf-8")
    assert "unpkg.com" not in built and "//cdn" not in built  # nothing fetched from a CDN
    probe = site / "probe-index.html"
    probe.write_text(built.replace("</body>", SEARCH_PROBE + "</body>"), encoding="utf-8")
    try:
        open_page = opener(tmp_path, NO_NETWORK, "--virtual-time-budget=10000")
        dom = open_page(probe, tmp_path / "index.png")
    finally:
        probe.unlink()
    found = re.search(r'<p id="probe">field (\w+) found (\d+) clipped (\d+)', dom)
    assert found, dom[-2000:]
    assert found[1] == "shown" and int(found[2]) > 0, found[0]
    assert found[3] == "0", found[0]


def test_readme_stays_a_guide_and_its_example_files_exist() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300, "the README is a short guide; long text goes to docs/"
    pages = [readme] + [p.read_text(encoding="utf-8") for p in (REPO / "docs").rglob("*.md")]
    named = {m for text in pages for m in re.findall(r"\bexamples/[\w.-]+", text)}
    assert "examples/docs.jsonl" in named
    assert [name for name in sorted(named) if not (REPO / name).is_file()] == []
    links = re.findall(r"\]\(((?:docs/)[^)#]+)", readme)
    assert links and [link for link in links if not (REPO / link).is_file()] == []


def test_milvus_server_commands_need_no_root_and_no_fixed_port() -> None:
    """The README's and the scale page's server command run as a user on a busy machine."""
    for page in (REPO / "README.md", REPO / "docs" / "scale.md"):
        text = page.read_text(encoding="utf-8")
        commands = [line for line in text.splitlines() if line.startswith(".milvus-venv/bin/")]
        assert commands, page
        for line in commands:
            data = re.search(r"--data (\S+)", line)
            assert data and data[1].startswith(("~/", "$HOME/", "./")), line  # a user's folder
            assert "--proxy-port $PORT" in line, line  # the free port picked above it
        assert 's.bind(("", 0))' in text and "http://127.0.0.1:19530" not in text, page
