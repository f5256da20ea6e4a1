"""Build a named collection (dense Milvus + lexical BM25) from documents, once."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter

from tools.corpus import DEFAULT_COLLECTION, default_corpus_path, load_documents
from tools.records import Evidence
from tools.search import bm25_dir, build_bm25
from tools.vectorstore import IndexMissingError, build_collection, collection_exists

_lock = threading.Lock()
_JUNK = re.compile(r"^[\W\d_]*$")
PASSAGE_CHARS = 1200


def split_passages(docs: Sequence[Evidence], max_chars: int = PASSAGE_CHARS) -> list[Evidence]:
    """Cut long documents into overlapping passages; drop punctuation/number-only junk."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=max_chars, chunk_overlap=max_chars // 8)
    out: list[Evidence] = []
    for doc in docs:
        if len(doc["text"]) <= max_chars:
            out.append(doc)
            continue
        pieces = [p for p in splitter.split_text(doc["text"]) if not _JUNK.match(p.strip())]
        out.extend(
            Evidence(id=f"{doc['id']}#{i}", title=doc["title"], text=p, source="", score=0.0)
            for i, p in enumerate(pieces)
        )
    return out


def build_index(
    docs: Sequence[Evidence],
    collection: str,
    milvus_uri: str = "",
    progress: Callable[[int], None] | None = None,
) -> int:
    """Index ``docs`` under ``collection`` in both engines; returns the passage count."""
    passages = split_passages(docs)
    build_bm25(collection, passages)
    build_collection(collection, passages, uri=milvus_uri, progress=progress)
    return len(passages)


def index_path(
    path: Path, collection: str, milvus_uri: str = "", progress: Callable[[int], None] | None = None
) -> int:
    """Index a JSONL file or a folder of .txt/.md files."""
    return build_index(load_documents(path), collection, milvus_uri, progress)


def ensure_index(collection: str, milvus_uri: str = "") -> None:
    """Make sure ``collection`` exists; the bundled default collection is built on first use.

    Raises:
        IndexMissingError: any other collection that was never indexed.
    """
    with _lock:
        ready = (
            collection_exists(collection, milvus_uri)
            and (bm25_dir(collection) / "documents.json").exists()
        )
        if ready:
            return
        if collection != DEFAULT_COLLECTION:
            raise IndexMissingError(collection)
        build_index(load_documents(default_corpus_path()), collection, milvus_uri)
