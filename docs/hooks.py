"""MkDocs hooks: diagrams, settings and catalog tables are generated from the code itself.

A page marks where generated content goes with an HTML comment:

- ``<!-- diagram: METHOD -->``: the compiled graph (``get_graph()``) laid out at build time in
  Python (grandalf, installed with the project; docs/graph_svg.py) and written as inline SVG, so
  the site needs no network and no system package; its edges as text under it;
- ``<!-- settings: METHOD -->``: the method's settings from its ``Context`` class, grouped;
- ``<!-- catalog: methods -->``: every method of the catalog (``graphs/registry.py``);
- ``<!-- catalog: datasets -->``: every dataset of the catalog
  (``factdebate/datasets/catalog.py``);

and ``reference/cli.md`` is written from the command line's own ``--help`` (docs/gen_cli.py).
Nothing generated is stored in the repository, so it cannot drift from the code.
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's packages

_MARK = re.compile(r"<!--\s*(diagram|settings|catalog):\s*([a-z0-9-]+)\s*-->")


_ENDS = {"__start__": "start", "__end__": "end"}


def _edge_text(edge: Any) -> str:
    arrow = "-.->" if edge.conditional else "-->"
    branch = f" ({edge.data})" if edge.data is not None and str(edge.data) != edge.target else ""
    source, target = _ENDS.get(edge.source, edge.source), _ENDS.get(edge.target, edge.target)
    return f"{source} {arrow} {target}{branch}"


def _diagram(method: str) -> str:
    """The method's compiled graph drawn as inline SVG, with its edges as text in a folded note."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # graph_svg beside this file
    from graph_svg import render

    from factdebate.graphs.registry import load_method

    drawn = load_method(method)[0].get_graph()
    svg = render(drawn, f"The {method} graph")
    edges = [_edge_text(edge) for edge in drawn.edges]
    return (
        f'<div class="graph-drawing">\n{svg}\n</div>\n\n'
        '??? note "The edges as text"\n\n'
        "    Laid out at build time from `graph.get_graph()` (the graph LangGraph compiles);\n"
        "    dashed arrows (`-.->`) are conditional, a branch's label in brackets.\n\n"
        + "\n".join(f"    {line}".rstrip() for line in ["```text", *edges, "```"])
    )


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _settings(method: str) -> str:
    """The method's settings, grouped, as Markdown tables."""
    from factdebate.settings import GROUPS, context_class, describe

    infos = describe(context_class(method))
    parts = []
    for group in GROUPS:
        members = [i for i in infos if i.group == group]
        if not members:
            continue
        parts += [
            f"**{group.capitalize()}**",
            "",
            "| setting | type | default | range | meaning |",
            "| --- | --- | --- | --- | --- |",
        ]
        for info in members:
            default = repr(info.default) if isinstance(info.default, str) else info.default
            parts.append(
                f"| `{info.name}` | {_cell(info.type)} | `{_cell(default)}` | "
                f"{info.range or ''} | {_cell(info.description)} |"
            )
        parts.append("")
    return '<div class="settings-table" markdown>\n\n' + "\n".join(parts) + "\n</div>"


def _methods_table(page_uri: str) -> str:
    """Every method of the catalog as a Markdown table, linked to its paper's page."""
    from factdebate.graphs.registry import METHODS, PAPERS

    here = posixpath.dirname(page_uri) or "."
    rows = [
        "| method | paper | role | input | description |",
        "| --- | --- | --- | --- | --- |",
    ]
    for spec in METHODS.values():
        family_page = "escalation" if spec.screens else spec.family  # one page per family
        page = posixpath.relpath(f"methods/{family_page}.md", here)
        rows.append(
            f"| `{spec.name}` | [{PAPERS[spec.family]}]({page}) | {spec.role} | "
            f"{spec.input_kind} | {_cell(spec.description)} |"
        )
    return "\n".join(rows)


def _datasets_table() -> str:
    """Every dataset of the catalog as a Markdown table."""
    from factdebate.datasets.catalog import CATALOG, corpus_source
    from factdebate.datasets.sources import RELEASES

    rows = [
        "| dataset | task | labels | corpus | licence | get it | description |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, spec in CATALOG.items():
        labels = ", ".join(spec.labels) or "—"
        source = corpus_source(name)
        corpus = "—" if source is None else "its own" if source == name else f"`{source}`'s"
        release = RELEASES[name]
        get = f"`factdebate datasets get {name}`" if release.downloads else "by hand"
        rows.append(
            f"| `{name}` | {spec.task} | {labels} | {corpus} | {_cell(release.licence)} | {get} | "
            f"{_cell(spec.description)} |"
        )
    return "\n".join(rows)


def _catalog(which: str, page_uri: str) -> str:
    """The catalog table ``which`` names: ``methods`` or ``datasets``."""
    if which == "methods":
        return _methods_table(page_uri)
    if which == "datasets":
        return _datasets_table()
    raise ValueError(f"{page_uri}: unknown catalog {which!r}; use methods or datasets")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the generation marks of a page."""

    def fill(match: re.Match[str]) -> str:
        kind, name = match[1], match[2]
        if kind == "diagram":
            return _diagram(name)
        if kind == "settings":
            return _settings(name)
        return _catalog(name, page.file.src_uri)

    return _MARK.sub(fill, markdown)


def on_files(files: Any, config: Any) -> Any:
    """Add the generated CLI reference page."""
    from mkdocs.structure.files import File

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gen_cli import reference

    files.append(File.generated(config, "reference/cli.md", content=reference()))
    return files
