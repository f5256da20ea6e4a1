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


def tidy_help(app: typer.Typer) -> None:
    """Give every command of ``app`` whole-paragraph help, and show flags without a type."""
    typer.core.TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]
    for info in app.registered_commands:
        doc = info.help or (inspect.getdoc(info.callback) if info.callback else None)
        if doc:
            info.help = paragraphs(doc)
