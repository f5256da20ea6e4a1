"""Make text safe to print: no secrets, no escape sequences, no control codes."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console

from factdebate.tools.core.secrets import REDACTED, redact

_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, screen clears, colours
    r"|(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|$)"  # OSC: window titles, hyperlinks, clipboard
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|$)"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?",  # every other escape (character sets, resets, keypad modes)
    re.DOTALL,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls but tab and newline, and the bidirectional overrides (text that
displays in another order than it reads)."""


def printable(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (tab, newline kept).

    Model replies and documents are untrusted: a reply holding ``ESC[2J`` cleared the screen
    during the live transcript, and OSC sequences can retitle the window or write the
    clipboard. Everything the CLI shows that came from a model or a document passes here.
    """
    if text.isprintable():
        return text
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


class SafeConsole(Console):
    """A rich ``Console`` whose ``print`` passes every string through ``printable`` first.

    The CLI prints transcripts, verdicts, justifications, document titles, hints and error
    messages quoting them; routing them all through one console leaves no print path
    unfiltered, and every string passes ``secrets.redact`` first (a password inside a
    checkpoint or model URL in a hint is never shown).
    Markup the CLI writes itself (``[bold]``) is printable text and stays.
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """``Console.print`` of the objects, strings redacted and made printable."""
        markup = kwargs.get("markup")
        markup = self._markup if markup is None else markup
        clean = [_shown(o, bool(markup)) if isinstance(o, str) else o for o in objects]
        super().print(*clean, **kwargs)


_BARE_REDACTED = re.compile(r"(?<!\\)" + re.escape(REDACTED))


def _shown(text: str, markup: bool) -> str:
    """``text`` redacted (``secrets.redact``) and printable; in markup, the mark stays text."""
    text = printable(redact(text))
    return _BARE_REDACTED.sub(lambda _: "\\" + REDACTED, text) if markup else text
