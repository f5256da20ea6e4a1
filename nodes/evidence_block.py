"""Render untrusted evidence into prompts inside fences it cannot break out of."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from tools.records import Evidence

_FENCE_RE = re.compile(r"<\s*/?\s*evidence", re.IGNORECASE)


def sanitize(text: str, max_chars: int) -> str:
    """Strip control characters, neutralise fence tags, and cap the length."""
    kept = "".join(ch if ch in "\n\t" or unicodedata.category(ch)[0] != "C" else " " for ch in text)
    kept = _FENCE_RE.sub("[fence removed]", kept)
    if len(kept) > max_chars:
        kept = kept[:max_chars].rstrip() + " [...]"
    return kept


def render_evidence(docs: Sequence[Evidence], max_chars: int = 2000) -> str:
    """Format documents as numbered, fenced blocks; an empty list says so explicitly."""
    if not docs:
        return "(no documents were retrieved)"
    blocks = []
    for i, doc in enumerate(docs, 1):
        title = sanitize(doc.get("title", ""), 200).replace('"', "'").replace("\n", " ")
        ident = sanitize(str(doc.get("id", "")), 200).replace('"', "'").replace("\n", " ")
        body = sanitize(doc.get("text", ""), max_chars)
        blocks.append(f'<evidence n="{i}" id="{ident}" title="{title}">\n{body}\n</evidence>')
    return "\n".join(blocks)
