"""MkDocs hooks: diagrams, settings and catalog tables are generated from the code itself.

A page marks where generated content goes with an HTML comment:

- ``<!-- diagram: METHOD -->``: the Mermaid drawing of the compiled graph (``get_graph()``),
  drawn by mermaid.js where it can load, and the same graph as text (grandalf) under it;
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


def _diagram(method: str) -> str:
    """The method's compiled graph as a Mermaid block, and as text in a folded note."""
    from factdebate.graphs.registry import load_method

    drawn = load_method(method)[0].get_graph()
    mermaid = drawn.draw_mermaid().strip()
    text = drawn.draw_ascii().rstrip()  # grandalf's layout: readable where mermaid.js cannot load
    return (
        f"```mermaid\n{mermaid}\n```\n\n"
        '??? note "The layout as text, for reading offline"\n\n'
        "    Drawn by grandalf; lines carry no direction and dotted ones are conditional. The\n"
        "    Mermaid source above, shown as text where mermaid.js cannot load, lists every edge\n"
        "    with its direction (`-.->` conditional).\n\n"
        + "\n".join(f"    {line}".rstrip() for line in ["```text", *text.splitlines(), "```"])
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
        page = posixpath.relpath(f"methods/{spec.family}.md", here)
        rows.append(
            f"| `{spec.name}` | [{PAPERS[spec.family]}]({page}) | {spec.role} | "
            f"{spec.input_kind} | {_cell(spec.description)} |"
        )
    return "\n".join(rows)


def _datasets_table() -> str:
    """Every dataset of the catalog as a Markdown table."""
    from factdebate.datasets.catalog import CATALOG, corpus_source

    rows = [
        "| dataset | task | labels | corpus | shipped | description |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, spec in CATALOG.items():
        labels = ", ".join(spec.labels) or "—"
        source = corpus_source(name)
        corpus = "—" if source is None else "its own" if source == name else f"`{source}`'s"
        shipped = "yes" if spec.shipped else "no (download)"
        rows.append(
            f"| `{name}` | {spec.task} | {labels} | {corpus} | {shipped} | "
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
