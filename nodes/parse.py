"""Parsers for model output: any string in, a typed value or a ParseFailure out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from factdebate.prompts.labels import LABEL_SPELLINGS, LABELS_3, spelling_key

Truth = Literal["TRUE", "FALSE"]


@dataclass(frozen=True)
class ParseFailure:
    """Model output that could not be read; kept verbatim so nothing is lost."""

    reason: str
    raw: str


def _spelling_re(spellings: dict[str, str]) -> re.Pattern[str]:
    words = sorted((re.escape(w) for w in spellings), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(words) + r")(?![\w-])")


_TRUTH_SPELLINGS = {"TRUE": "TRUE", "FALSE": "FALSE", "CORRECT": "TRUE", "INCORRECT": "FALSE"}
_SPELLING_RES = {id(s): _spelling_re(s) for s in (LABEL_SPELLINGS, _TRUTH_SPELLINGS)}
_NEGATION_RE = re.compile(
    r"\b(NOT|NO|NEVER|NEITHER|NOR|CANNOT|CAN'T|ISN'T|WASN'T|AREN'T|DOESN'T|DON'T)"
    r"(\s+[\w']+){0,3}\s*$"
)
"""A negation at most three words before a label, in the same clause."""
_MARKER_RE = re.compile(
    r"\b(VERDICT|LABEL|FINAL ANSWER|ANSWER|CONCLUSION|RATING|JUDGMENT|JUDGEMENT)\s*[:=-]?\s*$"
)
"""A word marking what follows as the verdict ("Verdict: ...")."""
_BOLD_RE = re.compile(r"\*\*([^*\n]+?)\*\*")


def _read_line(
    line: str, spellings: dict[str, str], allowed: tuple[str, ...]
) -> tuple[str | None, str | None]:
    """``(label, problem)`` of one line: the one label it states, or why it is ambiguous.

    Both are None when the line names no label at all.
    """
    text = spelling_key(line.replace("*", " ").replace("`", " "))
    plain: set[str] = set()
    negated: set[str] = set()
    marked: set[str] = set()
    for match in _SPELLING_RES[id(spellings)].finditer(text):
        label = spellings[match.group(1)]
        if label not in allowed:
            continue
        before = text[: match.start()]
        if _NEGATION_RE.search(before):
            negated.add(label)
        else:
            plain.add(label)
            if _MARKER_RE.search(before):
                marked.add(label)
    if len(plain) == 1 and (not negated or marked):
        return plain.pop(), None  # "Verdict: REFUTES (the documents do not support it)"
    if negated and not plain:
        return None, f"it negates {sorted(negated)}, which says what the verdict is not"
    if negated:
        return None, f"it names {sorted(plain)} and negates {sorted(negated)}"
    if plain:
        return None, f"it names several labels: {sorted(plain)}"
    return None, None


def _read(
    text: str, spellings: dict[str, str], allowed: tuple[str, ...], what: str
) -> str | ParseFailure:
    """Shared reading rule of labels and truth values (see ``parse_label``)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ParseFailure("empty output", text)
    candidates = [("last line", lines[-1])]
    candidates += [("bold text", bold) for bold in reversed(_BOLD_RE.findall(text))]
    for place, piece in candidates:
        label, problem = _read_line(piece, spellings, allowed)
        if problem:
            return ParseFailure(f"{place}: {problem}", text)
        if label:
            return label
    for line in reversed(lines):
        head, colon, tail = line.partition(":")
        if colon and _MARKER_RE.search(spelling_key(head.replace("*", " "))):
            label, _ = _read_line(tail, spellings, allowed)
            if label:
                return label
    return ParseFailure(f"no {what} on the last line, in bold, or after 'Verdict:'", text)


def parse_label(text: str, labels: tuple[str, ...] = LABELS_3) -> str | ParseFailure:
    """Read the verdict label a model was asked to put on its last line.

    Any spelling in ``factdebate.prompts.labels.LABEL_SPELLINGS`` counts (``Supported``, ``NEI``,
    ``Insufficient evidence``, ``Conflicting Evidence/Cherry-picking``...), in any case, bold
    or not. The last line decides when it names one label; a label it negates ("the claim is
    not supported") is never read as that label, and makes the line unreadable unless
    another label on it is marked as the verdict. A last line naming no label defers to the
    last bold label, then to the last ``Verdict: X`` line. Anything else is a ParseFailure:
    a label is never guessed.
    """
    return _read(text, LABEL_SPELLINGS, labels, "label")


def parse_truth(text: str) -> Truth | ParseFailure:
    """Read a juror's TRUE or FALSE (any case; ``Verdict: True`` too) by ``parse_label``'s rule."""
    value = _read(text, _TRUTH_SPELLINGS, ("TRUE", "FALSE"), "TRUE/FALSE")
    if isinstance(value, ParseFailure):
        return value
    return "TRUE" if value == "TRUE" else "FALSE"


_CONF_RE = re.compile(
    r"CONFIDENCE(?:\s+LEVEL)?\W{0,4}?(\d+(?:\.\d+)?|\.\d+)\s*(%|/\s*(?:10|100|1)\b)?",
    re.IGNORECASE,
)


def parse_confidence(text: str) -> float | ParseFailure:
    """Read the last ``CONFIDENCE: x`` as a share in 0-1.

    Accepts a fraction (``0.8``), a percentage (``80%`` or a bare ``80``) and a score out
    of 10 or 100 (``8/10``); anything outside 0-1 after that is a ParseFailure.
    """
    matches = _CONF_RE.findall(text)
    if not matches:
        return ParseFailure("no CONFIDENCE line", text)
    number, scale = matches[-1]
    value = float(number)
    scale = scale.replace(" ", "")
    if scale == "%" or (not scale and 1.0 < value <= 100.0):
        value /= 100.0
    elif scale.startswith("/"):
        value /= float(scale[1:])
    if not 0.0 <= value <= 1.0:
        return ParseFailure(f"confidence {number}{scale} out of range", text)
    return value


_QUERY_RE = re.compile(r"\[([^\[\]]+)\]")
_SEARCH_REQUEST_RE = re.compile(
    r"^\W*(?:SEARCH\s*:|ACTION\s*:\s*SEARCH\s*[\[:(])", re.IGNORECASE | re.MULTILINE
)


def wants_search(text: str) -> bool:
    """Whether a ReAct step asks to search (``SEARCH: [q]`` or ``Action: Search[q]``)."""
    return bool(_SEARCH_REQUEST_RE.search(text))


def parse_query(text: str, max_chars: int = 400) -> str | ParseFailure:
    """Read a search query written inside square brackets.

    ``[query]``, ``SEARCH: [query]`` and ReAct's ``Action: Search[query]`` all read (on a
    search-request line, its bracket wins over earlier ones such as citations); a query in
    quotes or parentheses after ``Search`` reads too.
    """
    request = _SEARCH_REQUEST_RE.search(text)
    matches = _QUERY_RE.findall(text[request.start() :] if request else text)
    if not matches:
        quoted = re.search(r"SEARCH\s*[:(]\s*[\"'(]?([^\"'()\n]+)", text, re.IGNORECASE)
        if not quoted:
            return ParseFailure("no [query] in output", text)
        matches = [quoted.group(1)]
    query = " ".join(matches[0].split()).strip("\"' ")
    if not query:
        return ParseFailure("empty query", text)
    return query[:max_chars]
