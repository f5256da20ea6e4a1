"""Answer normalisation and RAMDocs-style multi-answer metrics (strict EM, answer P/R/F1)."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

NO_ANSWER = "unknown"

_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        (
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        )
    )
}
_ARTICLES = {"a", "an", "the"}
_THOUSANDS = re.compile(r"(?<=\d)[,\u00a0\u202f\u2009'](?=\d{3}(?!\d))")
_TRAILING_ZEROS = re.compile(r"(\d)\.0+(?!\d)")
_DECIMAL_ZEROS = re.compile(r"(\d\.\d*?)0+(?!\d)")
_LONE_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")
_PUNCT = re.compile(
    "[" + re.escape(string.punctuation.replace(".", "")) + "\u2010-\u2015\u2018-\u201f\u00b7]"
)


def normalize_answer(text: str) -> str:
    """Canonical form of an answer for matching.

    Lower-cases, strips accents, writes ``%`` as ``percent``, removes thousands separators
    (``3,559`` -> ``3559``) and zero decimals (``2.50`` -> ``2.5``, ``7.0`` -> ``7``), turns
    the number words zero..twenty into digits, drops punctuation (a dot survives only
    between two digits) and the articles a/an/the, and collapses white space.
    """
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = text.replace("%", " percent ")
    text = _THOUSANDS.sub("", text)
    text = _TRAILING_ZEROS.sub(r"\1", text)
    text = _DECIMAL_ZEROS.sub(r"\1", text)
    text = _LONE_DOT.sub(" ", text)
    text = _PUNCT.sub(" ", text)
    tokens = [_NUMBER_WORDS.get(tok, tok) for tok in text.split() if tok not in _ARTICLES]
    return " ".join(tokens)


def _contains(outer: list[str], inner: list[str]) -> bool:
    n = len(inner)
    return any(outer[i : i + n] == inner for i in range(len(outer) - n + 1))


def answers_match(predicted: str, reference: str) -> bool:
    """Whether two answers name the same thing after normalisation.

    Equal normal forms match. Otherwise one answer must occur, as whole tokens, inside the
    other and cover at least half of its tokens: ``3,559`` matches ``3,559 people`` and
    ``Bhatt`` matches ``Mahesh Bhatt``, but ``1737`` does not match ``1 December 1737``.
    """
    p, r = normalize_answer(predicted).split(), normalize_answer(reference).split()
    if not p or not r:
        return False
    if p == r:
        return True
    short, long_ = (p, r) if len(p) < len(r) else (r, p)
    return 2 * len(short) >= len(long_) and _contains(long_, short)


_MONTHS = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
}
_SCALES = {"hundred", "thousand", "million", "billion", "trillion", "percent"}


def _key_tokens(tokens: list[str]) -> set[str]:
    """Tokens that carry a numeric answer: numbers, month names and scale words."""
    return {t for t in tokens if any(c.isdigit() for c in t) or t in _MONTHS | _SCALES}


def answer_includes(output: str, gold: str) -> bool:
    """Whether the answer ``output`` includes ``gold`` (the paper's strict-EM test).

    True when the two match (:func:`answers_match`); when ``gold`` occurs in ``output`` as
    whole tokens (``February 17, 1963`` includes ``1963``); or, for a gold answer stating a
    number, when ``output`` states all of its numbers, month names and scale words in any
    order, whatever the unit noun (``approximately 3,559 residents`` includes ``3,559
    people``, ``11 June 1963`` includes ``June 11, 1963``; ``1963`` does not include ``June
    11, 1963``, and ``2 billion`` does not include ``2 million``).
    """
    if answers_match(output, gold):
        return True
    o, g = normalize_answer(output).split(), normalize_answer(gold).split()
    if not o or not g:
        return False
    if _contains(o, g):
        return True
    keys = _key_tokens(g)
    return any(c.isdigit() for t in keys for c in t) and keys <= set(o)


def clean_answers(answers: Iterable[str]) -> list[str]:
    """Drop empty and ``unknown`` answers and duplicates (by normal form), keeping order."""
    seen: set[str] = set()
    kept: list[str] = []
    for answer in answers:
        norm = normalize_answer(answer)
        if not norm or norm == NO_ANSWER or norm in seen:
            continue
        seen.add(norm)
        kept.append(answer.strip())
    return kept


def answer_scores(
    predicted: Sequence[str], gold: Sequence[str], wrong: Sequence[str] = ()
) -> dict[str, float]:
    """Score one predicted answer list against the gold and the misinformation answers.

    Strict exact match as MADAM-RAG defines it: 1.0 iff the predictions include every gold
    answer and none of the wrong (misinformation) answers, "include" as in
    :func:`answer_includes`; a wrong answer that a gold answer itself includes (wrong
    ``1963``, gold ``June 11, 1963``) is not held against the prediction. Also returns
    ``precision`` (share of predictions including some gold answer; 0.0 for an empty list),
    ``recall`` (share of gold answers included) and ``f1``.

    An empty gold list is answered correctly only by an empty (or ``unknown``) prediction.
    """
    preds = clean_answers(predicted)
    golds = clean_answers(gold)
    wrongs = [w for w in clean_answers(wrong) if not any(answer_includes(g, w) for g in golds)]
    if not golds:
        ok = float(not preds)
        return {"exact_match": ok, "precision": ok, "recall": ok, "f1": ok}
    hit_gold = sum(any(answer_includes(p, g) for p in preds) for g in golds)
    good_preds = sum(any(answer_includes(p, g) for g in golds) for p in preds)
    misled = any(answer_includes(p, w) for p in preds for w in wrongs)
    precision = good_preds / len(preds) if preds else 0.0
    recall = hit_gold / len(golds)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    exact = float(hit_gold == len(golds) and not misled)
    return {"exact_match": exact, "precision": precision, "recall": recall, "f1": f1}


def mean_answer_scores(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Average per-question scores (as returned by :func:`answer_scores`) over a run."""
    keys = ("exact_match", "precision", "recall", "f1")
    n = len(rows)
    out = {key: (sum(float(row[key]) for row in rows) / n if n else 0.0) for key in keys}
    out["n"] = float(n)
    return out
