"""Build a named collection (dense Milvus + stemmed BM25) atomically: new generation, then swap."""

from __future__ import annotations

import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter

from tools.corpus import DEFAULT_COLLECTION, data_home, default_corpus_path, load_documents
from tools.manifest import (
    IndexMismatchError,
    IndexMissingError,
    Manifest,
    bm25_dir,
    check_name,
    corpus_hash,
    live_manifest,
    new_generation,
    write_manifest,
)
from tools.ranking import Passage
from tools.records import Evidence
from tools.search import build_bm25
from tools.vectorstore import (
    build_collection,
    collection_exists,
    drop_collection,
    drop_collections,
)

_lock = threading.RLock()
_JUNK = re.compile(r"^[\W\d_]*$")
PASSAGE_CHARS = 1200


def split_passages(docs: Sequence[Evidence], max_chars: int = PASSAGE_CHARS) -> list[Passage]:
    """Cut long documents into overlapping passages; drop punctuation/number-only junk."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=max_chars, chunk_overlap=max_chars // 8)
    out: list[Passage] = []
    for doc in docs:
        if len(doc["text"]) <= max_chars:
            out.append(Passage(id=doc["id"], doc=doc["id"], title=doc["title"], text=doc["text"]))
            continue
        pieces = [p for p in splitter.split_text(doc["text"]) if not _JUNK.match(p.strip())]
        out.extend(
            Passage(id=f"{doc['id']}#{i}", doc=doc["id"], title=doc["title"], text=p)
            for i, p in enumerate(pieces)
        )
    return out


def build_index(
    docs: Sequence[Evidence],
    collection: str,
    milvus_uri: str = "",
    progress: Callable[[int], None] | None = None,
) -> int:
    """Index ``docs`` under ``collection`` in both engines; returns the passage count.

    The new index is built beside the live one and becomes live only when the manifest is
    replaced; a failure (or a kill) before that leaves the previous index as it was.
    """
    check_name(collection)
    passages = split_passages(docs)
    generation = new_generation()
    manifest = Manifest(
        collection=collection,
        generation=generation,
        corpus_sha256=corpus_hash(passages),
        passages=len(passages),
        documents=len(docs),
    )
    lexical = bm25_dir(collection, generation)
    with _lock:
        try:
            start = time.perf_counter()
            build_bm25(lexical, passages)
            middle = time.perf_counter()
            build_collection(manifest.milvus_name, passages, milvus_uri, progress=progress)
            manifest.build_s = {
                "bm25": round(middle - start, 2),
                "dense": round(time.perf_counter() - middle, 2),
            }
        except BaseException:
            shutil.rmtree(lexical, ignore_errors=True)
            drop_collection(manifest.milvus_name, milvus_uri)
            raise
        write_manifest(manifest)  # the swap
        _clean_up(collection, manifest, milvus_uri)
    return len(passages)


def _clean_up(collection: str, live: Manifest, milvus_uri: str) -> None:
    """Remove earlier generations (and pre-manifest leftovers) of ``collection``."""
    drop_collections(collection, keep=live.milvus_name, uri=milvus_uri)
    root = data_home() / "bm25"
    for folder in root.iterdir() if root.exists() else []:
        stale = folder.name == collection or (
            folder.name.startswith(f"{collection}__")
            and folder != bm25_dir(collection, live.generation)
        )
        if stale and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def index_path(
    path: Path, collection: str, milvus_uri: str = "", progress: Callable[[int], None] | None = None
) -> int:
    """Index a JSONL file or a folder of .txt/.md files."""
    return build_index(load_documents(path), collection, milvus_uri, progress)


def index_ready(collection: str, milvus_uri: str = "") -> bool:
    """Whether ``collection`` has a live, compatible index in both engines."""
    try:
        manifest = live_manifest(collection)
    except (IndexMissingError, IndexMismatchError):
        return False
    lexical = bm25_dir(collection, manifest.generation) / "passages.json"
    return lexical.exists() and collection_exists(collection, milvus_uri)


def ensure_index(collection: str, milvus_uri: str = "") -> None:
    """Make sure ``collection`` exists; the bundled default collection is built on first use.

    Raises:
        IndexMissingError: any other collection that was never indexed.
        IndexMismatchError: any other collection built by an incompatible version.
    """
    with _lock:
        if index_ready(collection, milvus_uri):
            return
        if collection != DEFAULT_COLLECTION:
            live_manifest(collection)  # raises the precise error
            raise IndexMissingError(collection)
        build_index(load_documents(default_corpus_path()), collection, milvus_uri)
