"""Milvus full-text search: the BM25 function's fields, the analysed terms, the version rule."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from factdebate.tools.core.errors import SettingsError
from factdebate.tools.retrieval.lexical import tokenize
from factdebate.tools.retrieval.manifest import BM25_B, BM25_K1, LEXICAL_ENGINES
from factdebate.tools.retrieval.ranking import Passage

TERMS = "terms"  # the analysed title and text, the BM25 function's input
SPARSE = "sparse"  # the BM25 function's output: a sparse vector searched with metric BM25
FUNCTION = "bm25"
TERMS_BYTES = 65_535  # Milvus's longest VARCHAR
FULL_TEXT_FROM = (2, 5)  # the first Milvus (server and Lite) with the BM25 function
LEXICAL_ENV = "FACTDEBATE_LEXICAL"
"""Which lexical engine a new build uses: auto (by the Milvus version), milvus or bm25s."""
TERMS_ANALYZER: dict[str, Any] = {"tokenizer": "standard", "filter": ["lowercase"]}
"""Milvus's analyzer over terms we analysed already: it only splits them at the spaces."""
SERVER_ANALYZER: dict[str, Any] = {
    "tokenizer": "standard",
    "filter": ["lowercase", {"type": "stemmer", "language": "english"}],
}
"""Milvus's own English analysis over raw text (Milvus Lite 3.2.2 ignores the stemmer)."""


def version_numbers(version: str) -> tuple[int, ...]:
    """The numbers of a version Milvus reports (``v2.5.4``, ``2.3.5``, ``milvus_lite-3.2.2``)."""
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(n) for n in found.groups() if n is not None) if found else ()


def has_full_text(version: str) -> bool:
    """Whether a Milvus of this version (a server or Milvus Lite) has the BM25 function."""
    numbers = version_numbers(version)
    return bool(numbers) and numbers[:2] >= FULL_TEXT_FROM


def requested_lexical(lexical: str = "") -> str:
    """The lexical engine asked for: the argument, else ``FACTDEBATE_LEXICAL``, else auto."""
    chosen = (lexical or os.environ.get(LEXICAL_ENV, "") or "auto").strip().lower()
    if chosen not in ("auto", *LEXICAL_ENGINES):
        raise SettingsError(
            f"unknown lexical engine {chosen!r} ({LEXICAL_ENV} or --lexical): expected auto, "
            "milvus or bm25s"
        )
    return chosen


def lexical_for(version: str, lexical: str = "") -> str:
    """The lexical engine of a new build on a Milvus of ``version``.

    Raises:
        SettingsError: ``milvus`` asked for on a Milvus without full-text search.
    """
    chosen = requested_lexical(lexical)
    if chosen == "auto":
        return "milvus" if has_full_text(version) else "bm25s"
    if chosen == "milvus" and not has_full_text(version):
        raise SettingsError(
            f"this Milvus ({version or 'unknown version'}) has no full-text search (it needs "
            f"{'.'.join(map(str, FULL_TEXT_FROM))} or later): use lexical=bm25s or auto"
        )
    return chosen


def add_full_text(schema: Any, index: Any, analyzer: dict[str, Any] | None = None) -> None:
    """Add the terms field, its BM25 function and the sparse index to a schema being built."""
    from pymilvus import DataType, Function, FunctionType

    schema.add_field(
        TERMS,
        DataType.VARCHAR,
        max_length=TERMS_BYTES,
        enable_analyzer=True,
        analyzer_params=analyzer or TERMS_ANALYZER,
    )
    schema.add_field(SPARSE, DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name=FUNCTION,
            function_type=FunctionType.BM25,
            input_field_names=[TERMS],
            output_field_names=[SPARSE],
        )
    )
    index.add_index(
        SPARSE,
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={"bm25_k1": BM25_K1, "bm25_b": BM25_B},
    )


def fit_bytes(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def passage_terms(passages: Sequence[Passage]) -> list[str]:
    """Each passage's title and text as the one analyser makes them (stemmed, no stopwords)."""
    analysed = tokenize([f"{p['title']}\n{p['text']}" for p in passages])
    return [fit_bytes(" ".join(tokens), TERMS_BYTES) for tokens in analysed]


def query_terms(query: str) -> str:
    """A query analysed as the passages were: what the BM25 function is searched with."""
    return " ".join(tokenize([query])[0])


def has_function(described: dict[str, Any]) -> bool:
    """Whether a collection (``describe_collection``'s answer) holds our BM25 function."""
    return any(
        f.get("name") == FUNCTION and list(f.get("output_field_names", [])) == [SPARSE]
        for f in described.get("functions", []) or []
    )
