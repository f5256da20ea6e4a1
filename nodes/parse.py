"""Parsers for model output: any string in, a typed value or a ParseFailure out."""

from __future__ import annotations

import re
from dataclasses import dataclass

from prompts.labels import LABEL_SPELLINGS, LABELS_3


@dataclass(frozen=True)
class ParseFailure:
    """Model output that could not be read; kept verbatim so nothing is lost."""

    reason: str
    raw: str


_LABEL_WORDS = LABEL_SPELLINGS
_LABEL_RE = re.compile(
    r"\b(" + "|".join(sorted((re.escape(w) for w in _LABEL_WORDS), key=len, reverse=True)) + r")\b"
)
_BOLD_RE = re.compile(r"\*\*\s*([A-Za-z _-]+?)\s*\*\*")


def _labels_in(text: str, allowed: tuple[str, ...]) -> list[str]:
    found = [_LABEL_WORDS[m.group(1)] for m in _LABEL_RE.finditer(text.upper().replace("_", " "))]
    return [label for label in found if label in allowed]


def parse_label(text: str, labels: tuple[str, ...] = LABELS_3) -> str | ParseFailure:
    """Read the verdict label a model was asked to put on its last line.

    The last non-empty line must name exactly one distinct label. When it names none, the
    last bold ``**LABEL**`` in the text is accepted (models often add a closing remark).
    Anything else is a ParseFailure: a label is never guessed.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ParseFailure("empty output", text)
    on_last = set(_labels_in(lines[-1], labels))
    if len(on_last) == 1:
        return on_last.pop()
    if len(on_last) > 1:
        return ParseFailure(f"last line names several labels: {sorted(on_last)}", text)
    bold = [m.group(1) for m in _BOLD_RE.finditer(text)]
    bold_labels = [found for b in bold for found in _labels_in(b, labels)]
    if bold_labels:
        return bold_labels[-1]
    return ParseFailure("no label on the last line", text)


_QUERY_RE = re.compile(r"\[([^\[\]]+)\]")


def parse_query(text: str, max_chars: int = 400) -> str | ParseFailure:
    """Read a search query written inside square brackets."""
    match = _QUERY_RE.search(text)
    if not match:
        return ParseFailure("no [query] in output", text)
    query = " ".join(match.group(1).split())
    if not query:
        return ParseFailure("empty query", text)
    return query[:max_chars]
