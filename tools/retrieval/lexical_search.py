"""Stemmed BM25 search of a collection, in Milvus or bm25s shards (web search: tools/websearch)."""

from __future__ import annotations

from factdebate.tools.core.records import Evidence
from factdebate.tools.retrieval.lexical import (
    FETCH_DOCS,
    TITLE_WEIGHT,
    LexicalIndex,
    build_bm25,
    fit_lexical,
    lexical_index,
    tokenize,
)
from factdebate.tools.retrieval.manifest_store import live_manifest
from factdebate.tools.retrieval.vectorstore import full_text_hits, shown, to_evidence

__all__ = [
    "FETCH_DOCS",
    "TITLE_WEIGHT",
    "LexicalIndex",
    "OfflineSearch",
    "build_bm25",
    "fit_lexical",
    "lexical_index",
    "to_evidence",
    "tokenize",
]


class OfflineSearch:
    """Stemmed BM25 over a collection: the no-network stand-in for web search."""

    name = "bm25"

    def __init__(self, collection: str, milvus_uri: str = "") -> None:
        """Search ``collection`` (its index is loaded on first use).

        The manifest stored in Milvus names the live index and where its BM25 lives: in
        Milvus (searched there, texts read from Milvus) or in bm25s shards on this machine.
        """
        self.collection = collection
        self.milvus_uri = milvus_uri

    def search(self, query: str, k: int) -> list[Evidence]:
        """The ``k`` best distinct documents, each shown by its best-scoring passage."""
        manifest = live_manifest(self.collection, self.milvus_uri)
        if manifest.lexical == "milvus":
            hits = full_text_hits(manifest, query, k, self.milvus_uri)
            return shown(manifest, hits, "bm25", self.milvus_uri)
        index = lexical_index(manifest)
        scores = index.scores(query)
        return [
            to_evidence(index.passages[i], "bm25", float(scores[i]))
            for _, i in index.rank(query, k)
        ]
