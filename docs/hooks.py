"""MkDocs hooks: method pages get their graph diagram and settings table from the code itself.

A page marks where generated content goes with an HTML comment:

- ``<!-- diagram: METHOD -->``: the Mermaid drawing of the compiled graph (``get_graph()``),
  drawn by mermaid.js where it can load, and the same graph as text (grandalf) under it;
- ``<!-- settings: METHOD -->``: the method's settings from its ``Context`` class, grouped;

and ``reference/cli.md`` is written from the command line's own ``--help`` (docs/gen_cli.py).
Nothing generated is stored in the repository, so it cannot drift from the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's packages

_MARK = re.compile(r"<!--\s*(diagram|settings):\s*([a-z0-9-]+)\s*-->")


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


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the generation marks of a page."""

    def fill(match: re.Match[str]) -> str:
        kind, method = match[1], match[2]
        return _diagram(method) if kind == "diagram" else _settings(method)

    return _MARK.sub(fill, markdown)


def on_files(files: Any, config: Any) -> Any:
    """Add the generated CLI reference page."""
    from mkdocs.structure.files import File

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gen_cli import reference

    files.append(File.generated(config, "reference/cli.md", content=reference()))
    return files
