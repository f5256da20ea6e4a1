"""Make untrusted text (documents, other agents' words) safe to quote in a prompt, and fence it."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from factdebate.tools.core.records import Evidence

_FENCE_RE = re.compile(r"<\s*/?\s*(?:evidence|argument)\b", re.IGNORECASE)  # our fence tags
# Chat-template control tokens of common tokenizers: ChatML/Qwen/SmolLM <|im_start|>, Llama 3
# <|eot_id|>, DeepSeek's full-width <｜...｜>, Llama 2 [INST] and <<SYS>>, Gemma turns, <s>.
_CONTROL_TOKEN_RE = re.compile(
    r"<\s*[|｜][^<>\n]{0,64}?[|｜]\s*>|\[\s*/?\s*INST\s*\]|<<\s*/?\s*SYS\s*>>"
    r"|<\s*/?\s*s\s*>|<\s*/?\s*(?:start_of_turn|end_of_turn|bos|eos)\s*>",
    re.IGNORECASE,
)
NO_ANSWER = "(no answer)"
QUERY_CHARS = 500  # cap on a model-written search query quoted back into a prompt


def _no_control(text: str) -> bool:
    """True when ``text`` holds no control characters (category C) besides newline and tab.

    Every category-C character is non-printable, so a printable remainder proves it at C
    speed; text with other non-printables (no-break spaces, say) takes the per-character way.
    """
    return text.replace("\n", "").replace("\t", "").isprintable()


def _visible(ch: str) -> str:
    return ch if ch in "\n\t" or unicodedata.category(ch)[0] != "C" else " "


def sanitize(text: str, max_chars: int | None) -> str:
    """Clean untrusted text: the one cleaner for documents and agent outputs alike.

    Control characters become spaces, tokenizer control tokens and fence tags are replaced
    by a bracketed note, and the result is cut at ``max_chars`` (None: the caller checks the
    length itself) and then ends in ``[...]``. A huge input is cut before cleaning, which
    bounds the work.
    """
    cut = max_chars is not None and len(text) > 2 * max_chars + 1000
    if cut and max_chars is not None:
        text = text[: 2 * max_chars + 1000]
    kept = text if _no_control(text) else "".join(_visible(ch) for ch in text)
    kept = _CONTROL_TOKEN_RE.sub("[control token removed]", kept)
    kept = _FENCE_RE.sub("[fence removed]", kept)
    if max_chars is not None and (cut or len(kept) > max_chars):
        kept = kept[:max_chars].rstrip() + " [...]"
    return kept


def render_evidence(
    docs: Sequence[Evidence],
    max_chars: int = 2000,
    shown: dict[tuple[str, str], str] | None = None,
    where: str = "",
) -> str:
    """Format documents as numbered, fenced blocks; an empty list says so explicitly.

    With ``shown`` (one dict for a whole prompt), a document already rendered in that prompt
    (same id and text) is not repeated: its block names where it was first shown, and
    ``where`` (e.g. "round 1, debater_a") is recorded as the place of the documents shown now.
    """
    if not docs:
        return "(no documents were retrieved)"
    blocks = []
    for i, doc in enumerate(docs, 1):
        ident, title, body = _fields(doc, max_chars)
        if shown is not None:
            key = (ident, body)
            if key in shown:
                body = f"(the same document as {shown[key]}; not repeated)"
            else:
                shown[key] = f"{where} document [{i}]".strip()
        blocks.append(_fenced(i, ident, title, body))
    return "\n".join(blocks)


def _fields(doc: Evidence, max_chars: int) -> tuple[str, str, str]:
    """A document's id, title and text, cleaned for a fence (quotes and newlines out of tags)."""
    title = sanitize(doc.get("title", ""), 200).replace('"', "'").replace("\n", " ")
    ident = sanitize(str(doc.get("id", "")), 200).replace('"', "'").replace("\n", " ")
    return ident, title, sanitize(doc.get("text", ""), max_chars)


def _fenced(n: int, ident: str, title: str, body: str) -> str:
    return f'<evidence n="{n}" id="{ident}" title="{title}">\n{body}\n</evidence>'


def evidence_blocks(docs: Sequence[Evidence], max_chars: int = 2000) -> list[str]:
    """One fenced block per document, numbered and labelled exactly as ``render_evidence`` shows.

    For a scorer checking an answer against the documents it cites: "[2]" and "Document 2"
    name the block with ``n="2"``.
    """
    return [_fenced(i, *_fields(doc, max_chars)) for i, doc in enumerate(docs, 1)]


def quote_answer(answer: object, max_chars: int) -> str:
    """An agent's words for another's prompt: sanitised, capped, or an explicit placeholder."""
    text = str(answer).strip() if answer else ""
    return sanitize(text, max_chars) if text else NO_ANSWER
