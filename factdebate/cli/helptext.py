"""Help screens that read well at any width: whole paragraphs, and no type shown for flags."""

from __future__ import annotations

import inspect
from typing import Any

import typer
import typer.core


def paragraphs(doc: str) -> str:
    """A docstring with each paragraph on one line, for the help screen to wrap at its width.

    Typer's rich help keeps a docstring's line breaks after its first paragraph, so a screen
    wider or narrower than the source broke lines in the middle of sentences.
    """
    parts = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in part.splitlines()) for part in parts)


def _flag_type(self: typer.core.TyperOption, ctx: Any) -> str | None:
    """No type for an on/off flag (``--review``), Typer's own type for any other option."""
    if self.is_flag and not self.count:
        return None
    return _typer_type(self, ctx)


_typer_type = typer.core.TyperOption.display_type_rich


def _whole_words_table() -> type[Any]:
    """Typer's help table with no option or method name cut at any width.

    An option's names (``--pages --no-pages``) share one column that wraps only between them,
    so the help column keeps the rest of the screen; a word still wider than it folds onto the
    next line instead of ending in an ellipsis (``--langsmith-experi…`` at 80 columns).
    """
    from rich.columns import Columns
    from rich.table import Table
    from rich.text import Text

    class WholeWordsTable(Table):
        whole_words = True

        def add_row(self, *cells: Any, **kwargs: Any) -> None:
            if len(cells) >= 6:  # [required mark,] long, short, --no- long, --no- short, type, help
                *head, long, short, no_long, no_short, kind, text = cells
                names = [c for c in (long, short, no_long, no_short) if str(c).strip()]
                cells = (
                    *head,
                    Text(" ").join(Text(str(n)) if isinstance(n, str) else n for n in names),
                    kind,
                    text,
                )
            for cell in cells:
                for part in cell.renderables if isinstance(cell, Columns) else [cell]:
                    if isinstance(part, Text):
                        part.overflow = "fold"
            super().add_row(*cells, **kwargs)

    return WholeWordsTable


def _whole_words_help(original: Any) -> Any:
    """``original`` format_help, run with Typer's help table made whole-words first.

    Typer imports its rich help module (rich's markdown, tracebacks, pretty-printing) only to
    draw a help screen; patching it on first use keeps that import off every other command,
    so a refused typo costs a fraction of the CPU.
    """

    def format_help(self: Any, ctx: Any, formatter: Any) -> Any:
        from typer import rich_utils

        if not getattr(getattr(rich_utils, "Table", None), "whole_words", False):
            rich_utils.Table = _whole_words_table()  # type: ignore[attr-defined]
        return original(self, ctx, formatter)

    format_help.whole_words = True  # type: ignore[attr-defined]
    return format_help


def tidy_help(app: typer.Typer) -> None:
    """Give every command of ``app`` whole-paragraph help, and show flags without a type."""
    typer.core.TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]
    for cls in (typer.core.TyperCommand, typer.core.TyperGroup):
        if not getattr(cls.format_help, "whole_words", False):
            cls.format_help = _whole_words_help(cls.format_help)  # type: ignore[method-assign]
    for info in app.registered_commands:
        doc = info.help or (inspect.getdoc(info.callback) if info.callback else None)
        if doc:
            info.help = paragraphs(doc)
