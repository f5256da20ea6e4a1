"""Ingest a corpus stream into a collection (dense, and BM25 in Milvus or bm25s): resumable."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter

from factdebate.tools.core.files import atomic_target
from factdebate.tools.core.home import data_home
from factdebate.tools.core.records import Evidence
from factdebate.tools.core.secrets import redact
from factdebate.tools.retrieval.corpus import (
    DEFAULT_COLLECTION,
    CorpusError,
    Problem,
    default_corpus_path,
    iter_documents,
    load_documents,
    shards,
)
from factdebate.tools.retrieval.embeddings import (
    EncoderSpec,
    default_embeddings,
    load_encoder,
    requested_encoder,
)
from factdebate.tools.retrieval.full_text import lexical_for, requested_lexical
from factdebate.tools.retrieval.lease import Lease, build_lease
from factdebate.tools.retrieval.lexical import PassageWriter, build_lexical, lexical_ready
from factdebate.tools.retrieval.manifest import (
    ANALYZER,
    EMBEDDING_MODEL,
    FORMAT,
    MILVUS_ANALYZER,
    IndexMismatchError,
    IndexMissingError,
    IndexUnavailableError,
    Manifest,
    bm25_dir,
    check_name,
    hashed_line,
    is_server,
    new_generation,
)
from factdebate.tools.retrieval.manifest_store import live_manifest, write_manifest
from factdebate.tools.retrieval.milvus import (
    count_rows,
    create_collection,
    delete_from,
    drop_collection,
    drop_collections,
    flush,
    insert_rows,
    milvus_client,
    server_version,
    wait_indexed,
)
from factdebate.tools.retrieval.milvus import milvus_uri as resolved_uri
from factdebate.tools.retrieval.ranking import Passage
from factdebate.tools.retrieval.vectorstore import collection_exists

_lock = threading.RLock()
_JUNK = re.compile(r"^[\W\d_]*$")
PASSAGE_CHARS = 1200
BATCH = 2048  # passages embedded and inserted per step (embedded shortest first within it)
EMBED_BATCH = 128  # texts per encoder call
CHECKPOINT_S = 30.0  # seconds between durable checkpoints of a build (0: after every batch)
log = logging.getLogger("factdebate")

Encoder = Callable[[list[str]], Sequence[Sequence[float]]]


def _splitter(max_chars: int) -> RecursiveCharacterTextSplitter:
    return RecursiveCharacterTextSplitter(chunk_size=max_chars, chunk_overlap=max_chars // 8)


def passages_of(doc: Evidence, max_chars: int = PASSAGE_CHARS) -> list[Passage]:
    """One document's passages: itself when short, else overlapping slices (junk dropped).

    Slices are cut at paragraph, then line (FEVER's sentence lines), then word boundaries.
    """
    if len(doc["text"]) <= max_chars:
        return [Passage(id=doc["id"], doc=doc["id"], title=doc["title"], text=doc["text"])]
    pieces = [p for p in _splitter(max_chars).split_text(doc["text"]) if not _JUNK.match(p.strip())]
    return [
        Passage(id=f"{doc['id']}#{i}", doc=doc["id"], title=doc["title"], text=p)
        for i, p in enumerate(pieces)
    ]


def split_passages(docs: Iterable[Evidence], max_chars: int = PASSAGE_CHARS) -> list[Passage]:
    """Cut long documents into overlapping passages; drop punctuation/number-only junk."""
    return [p for doc in docs for p in passages_of(doc, max_chars)]


@dataclass
class Checkpoint:
    """How far a build got: what survives a kill, so the same command resumes it."""

    collection: str
    generation: str
    source: str
    uri: str
    documents: int = 0
    passages: int = 0
    dense_index: str = "AUTOINDEX"
    embed_s: float = 0.0
    lexical: str = "bm25s"  # where the BM25 index goes (manifest.LEXICAL_ENGINES)
    milvus_version: str = ""


class PassageDigest:
    """Stands in for the passage store when Milvus holds the texts: digests what is appended.

    A resumed build appends the passages it skips again, so the digest covers every passage.
    """

    def __init__(self) -> None:
        """Start an empty digest."""
        self.digest = hashlib.sha256()

    def append(self, passages: Iterable[Passage]) -> None:
        """Digest passages after the last one."""
        for passage in passages:
            self.digest.update(hashed_line(passage))

    def commit(self) -> None:
        """Nothing to make durable: Milvus holds the passages."""

    def truncate(self, count: int) -> None:
        """Nothing to undo: the digest restarts with the build."""

    def close(self) -> None:
        """Nothing to close."""


def checkpoint_path(collection: str) -> Path:
    """Where the unfinished build of ``collection`` records its progress."""
    return data_home() / "builds" / f"{check_name(collection)}.json"


def _save(state: Checkpoint) -> None:
    path = checkpoint_path(state.collection)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp:
        tmp.write_text(json.dumps(asdict(state)), encoding="utf-8")


def _load_checkpoint(collection: str) -> Checkpoint | None:
    try:
        return Checkpoint(**json.loads(checkpoint_path(collection).read_text("utf-8")))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        log.warning("unreadable build checkpoint of %r: starting over", collection)
        checkpoint_path(collection).unlink(missing_ok=True)
        return None


def _discard(state: Checkpoint) -> None:
    """Remove an unfinished build: its Milvus collection, passage store and checkpoint."""
    drop_collection(f"{state.collection}__{state.generation}", state.uri)
    shutil.rmtree(bm25_dir(state.collection, state.generation), ignore_errors=True)
    checkpoint_path(state.collection).unlink(missing_ok=True)


def build_collection(
    name: str,
    passages: Sequence[Passage],
    uri: str = "",
    *,
    first: int = 0,
    encode: Encoder | None = None,
    progress: Callable[[int], None] | None = None,
    full_text: bool = False,
) -> None:
    """Embed one batch of passages (shortest first, for even padding) and insert it.

    Row ids are ``first`` onwards: a passage's position in the whole build. ``progress`` is
    told the texts of each encoder call; ``full_text``: rows carry their analysed terms.
    """
    texts = [f"{p['title']}\n{p['text']}" for p in passages]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    embed = encode or default_embeddings().embed_documents
    vectors: list[Sequence[float]] = [[] for _ in texts]
    for start in range(0, len(order), EMBED_BATCH):
        chunk = order[start : start + EMBED_BATCH]
        for i, vector in zip(chunk, embed([texts[i] for i in chunk]), strict=True):
            vectors[i] = vector
        if progress:
            progress(len(chunk))
    insert_rows(name, first, passages, vectors, uri, full_text=full_text)


def _batches(documents: Iterator[Evidence], max_chars: int) -> Iterator[tuple[int, list[Passage]]]:
    """``(documents, passages)`` in steps of about ``BATCH`` passages; documents never split."""
    docs, batch = 0, []
    for doc in documents:
        batch.extend(passages_of(doc, max_chars))
        docs += 1
        if len(batch) >= BATCH:
            yield docs, batch
            docs, batch = 0, []
    if docs:
        yield docs, batch


def _start(
    collection: str, source: str, uri: str, encoder: EncoderSpec | None = None, lexical: str = ""
) -> tuple[Checkpoint, bool]:
    """The checkpoint to continue (same source and URI) or a fresh one; True when resuming.

    A fresh build's lexical engine is ``lexical`` (``full_text.lexical_for``: by default the
    Milvus version decides).
    """
    state = _load_checkpoint(collection)
    if state is not None and (state.source, state.uri) == (source, uri):
        name = f"{collection}__{state.generation}"
        try:
            if count_rows(name, uri, below=state.passages) == state.passages:
                return state, True
            log.warning("the unfinished build of %r lost rows in Milvus: starting over", collection)
        except Exception as exc:  # a missing collection or a Milvus error: rebuild
            log.warning("cannot resume the build of %r (%s): starting over", collection, exc)
    if state is not None:
        _discard(state)
    state = Checkpoint(collection, new_generation(), source, uri)
    state.milvus_version = server_version(uri)
    state.lexical = lexical_for(state.milvus_version, lexical)
    dim = (encoder or EncoderSpec(requested_encoder())).dim
    state.dense_index = create_collection(
        f"{collection}__{state.generation}", uri, dim, full_text=state.lexical == "milvus"
    )
    if state.lexical == "bm25s":
        bm25_dir(collection, state.generation).mkdir(parents=True, exist_ok=True)
    _save(state)
    return state, False


def ingest(
    documents: Iterable[Evidence],
    collection: str,
    milvus_uri: str = "",
    *,
    source: str,
    progress: Callable[[int], None] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    on_embedded: Callable[[int, int], None] | None = None,
    encode: Encoder | None = None,
    checkpoint_s: float = CHECKPOINT_S,
    max_chars: int = PASSAGE_CHARS,
    embed_model: str = "",
    lexical: str = "",
) -> Manifest:
    """Stream ``documents`` into a new generation of ``collection``; returns the live manifest.

    Memory holds one batch of passages at a time (the lexical build one BM25 shard's token ids,
    4 bytes each). Every ``checkpoint_s`` seconds the rows are flushed to Milvus, the passage
    store is fsynced and the progress recorded; a build killed after that resumes when called
    again with the same ``source`` (a fingerprint of the corpus and settings) and URI: the
    documents already stored are skipped, an unfinished batch is deleted and redone. The new
    generation becomes live only when its manifest is written; until then the previous one
    serves. An exception discards the unfinished build; a kill or Ctrl-C leaves it to resume.

    Args:
        documents: The corpus, in the same order on every call.
        collection: The index name.
        milvus_uri: A Milvus server URI, or empty for Milvus Lite under the data home.
        source: What identifies the corpus and settings (see ``path_source``).
        progress: Called with the number of passages each encoder call embedded (and first
            with the passages a resumed build already holds).
        on_batch: Called with the documents and passages stored so far, after each step.
        on_embedded: Called after each encoder call within a step (``EMBED_BATCH`` texts) with
            the documents and passages done so far, the step's documents counted in proportion
            to its passages embedded: progress that moves while one slow step runs.
        encode: Vectors of texts; the default encoder unless given (benchmarks pass cached ones).
        checkpoint_s: Seconds between checkpoints.
        max_chars: Longest passage.
        embed_model: The encoder (``embeddings.requested_encoder``: empty = the
            ``FACTDEBATE_EMBED_MODEL`` environment variable, else the shipped MiniLM); the
            manifest records it. A given ``encode`` stands in for it.
        lexical: Where the BM25 index goes: ``milvus`` (a BM25 function in the collection;
            Milvus 2.5+ and Milvus Lite 3), ``bm25s`` (shards under the data home) or
            ``auto``; empty = ``FACTDEBATE_LEXICAL``, else auto (milvus where the Milvus has
            full-text search). A build never resumes with another engine.
    """
    check_name(collection)
    # a store that cannot be opened says so (a held Lite file after its wait) before the
    # encoder loads
    milvus_client(resolved_uri(milvus_uri))
    if encode is None:
        chosen = load_encoder(embed_model)
        spec, encode = chosen.spec, chosen.embeddings.embed_documents
    else:
        spec = EncoderSpec(requested_encoder(embed_model))
    engine = requested_lexical(lexical)
    # a build never resumes with another encoder or lexical engine
    source = f"{source} encoder={spec.describe()} lexical={engine}"
    try:
        with _lock, build_lease(collection, milvus_uri) as lease:
            return _ingest(
                documents,
                collection,
                milvus_uri,
                source=source,
                spec=spec,
                encode=encode,
                lease=lease,
                progress=progress,
                on_batch=on_batch,
                on_embedded=on_embedded,
                checkpoint_s=checkpoint_s,
                max_chars=max_chars,
                lexical=engine,
            )
    except Exception as exc:
        if from_milvus(exc):
            raise _milvus_failed(collection, milvus_uri, exc) from exc
        raise


def from_milvus(exc: BaseException) -> bool:
    """Whether ``exc`` came from the Milvus client or its gRPC channel (a server that went away)."""
    return any(
        kind.__module__.partition(".")[0] in {"pymilvus", "grpc", "milvus_lite"}
        for kind in type(exc).__mro__
    )


def _milvus_failed(collection: str, uri: str, exc: BaseException) -> IndexUnavailableError:
    """The one-line error of a Milvus call that failed while ``collection`` was being built."""
    where = (
        f"the Milvus server at {redact(uri)}"
        if is_server(uri)
        else f"Milvus Lite at {resolved_uri(uri)}"
    )
    text = str(getattr(exc, "message", "") or exc)  # pymilvus wraps its message in <...>
    first = (text.splitlines() or [""])[0][:300]
    return IndexUnavailableError(
        f"{where} failed while indexing {collection!r} "
        f"({type(exc).__name__}: {first}); the unfinished build is kept: run the same command "
        "again to resume once Milvus is back"
    )


def _ingest(
    documents: Iterable[Evidence],
    collection: str,
    milvus_uri: str,
    *,
    source: str,
    spec: EncoderSpec,
    encode: Encoder,
    lease: Lease,
    progress: Callable[[int], None] | None,
    on_batch: Callable[[int, int], None] | None,
    on_embedded: Callable[[int, int], None] | None,
    checkpoint_s: float,
    max_chars: int,
    lexical: str,
) -> Manifest:
    """``ingest`` once the build's lock and lease are held."""
    state, resumed = _start(collection, source, milvus_uri, spec, lexical)
    name = f"{collection}__{state.generation}"
    full_text = state.lexical == "milvus"
    shards = bm25_dir(collection, state.generation)
    writer: PassageWriter | PassageDigest = PassageDigest() if full_text else PassageWriter(shards)
    try:
        if resumed:
            writer.truncate(state.passages)
            delete_from(name, state.passages, milvus_uri)
            log.info("resuming %r after %d passages", collection, state.passages)
            if progress and state.passages:
                progress(state.passages)
        stream = iter(documents)
        for _ in range(state.documents):  # skip what is stored (digested again in Milvus)
            doc = next(stream, None)
            if full_text and doc is not None:
                writer.append(passages_of(doc, max_chars))
        if on_batch:
            on_batch(state.documents, state.passages)
        last = time.monotonic()
        for docs, batch in _batches(stream, max_chars):
            start = time.perf_counter()
            build_collection(
                name,
                batch,
                milvus_uri,
                first=state.passages,
                encode=encode,
                progress=_within_step(progress, on_embedded, state, docs, len(batch)),
                full_text=full_text,
            )
            writer.append(batch)
            state.embed_s += time.perf_counter() - start
            state.documents += docs
            state.passages += len(batch)
            if on_batch:
                on_batch(state.documents, state.passages)
            if time.monotonic() - last >= checkpoint_s:
                _checkpoint(state, writer, name)
                last = time.monotonic()
        _checkpoint(state, writer, name)
        writer.close()
        manifest = _finish(state, name, writer, spec)
        lease.check()  # still this build's: only the lease holder swaps
    except Exception as exc:
        _abandon(state, writer, keep=from_milvus(exc))
        raise
    write_manifest(manifest, milvus_uri)  # the swap
    checkpoint_path(collection).unlink(missing_ok=True)
    _clean_up(collection, manifest, milvus_uri)
    return manifest


def _abandon(state: Checkpoint, writer: PassageWriter | PassageDigest, *, keep: bool) -> None:
    """Close a failed build and remove its unfinished parts, or ``keep`` them to resume.

    Cleanup never hides the failure that caused it: a step that fails too is logged only.
    """
    try:
        writer.close()
    except Exception as exc:  # a full disk: the build is discarded or truncated anyway
        log.warning("cannot close the passage store of %r: %s", state.collection, exc)
    if keep:
        return
    try:
        _discard(state)
    except Exception as exc:  # Milvus gone too: the next build of the collection drops it
        shutil.rmtree(bm25_dir(state.collection, state.generation), ignore_errors=True)
        checkpoint_path(state.collection).unlink(missing_ok=True)
        log.warning("cannot drop the unfinished build of %r: %s", state.collection, exc)


def _within_step(
    progress: Callable[[int], None] | None,
    on_embedded: Callable[[int, int], None] | None,
    state: Checkpoint,
    docs: int,
    size: int,
) -> Callable[[int], None] | None:
    """The encoder-call callback of one step of ``docs`` documents and ``size`` passages."""
    if on_embedded is None:
        return progress
    documents, passages, embedded = state.documents, state.passages, 0

    def tell(count: int) -> None:
        nonlocal embedded
        embedded += count
        if progress:
            progress(count)
        on_embedded(documents + docs * embedded // max(size, 1), passages + embedded)

    return tell


def _checkpoint(state: Checkpoint, writer: PassageWriter | PassageDigest, name: str) -> None:
    flush(name, state.uri)
    writer.commit()
    _save(state)


def _finish(
    state: Checkpoint, name: str, writer: PassageWriter | PassageDigest, encoder: EncoderSpec
) -> Manifest:
    """Build the lexical index, wait for Milvus's, and check Milvus holds every passage."""
    if state.passages == 0:
        raise CorpusError(
            f"no passages to index into {state.collection!r}: the corpus holds no document "
            "with text"
        )
    start = time.perf_counter()
    if isinstance(writer, PassageDigest):  # Milvus built the BM25 index while inserting
        sha = writer.digest.hexdigest()
    else:
        sha = build_lexical(writer.folder)
    middle = time.perf_counter()
    if is_server(state.uri):
        wait_indexed(name, state.uri)
    rows = count_rows(name, state.uri)
    if rows != state.passages:
        raise IndexMismatchError(f"Milvus holds {rows} rows of {name}, expected {state.passages}")
    return Manifest(
        collection=state.collection,
        generation=state.generation,
        corpus_sha256=sha,
        passages=state.passages,
        documents=state.documents,
        build_s={
            "dense": round(state.embed_s + time.perf_counter() - middle, 2),
            "bm25": round(middle - start, 2),
        },
        dense_index=state.dense_index,
        embedding_model=encoder.name,
        embedding_dim=encoder.dim,
        query_prefix=encoder.query_prefix,
        passage_prefix=encoder.passage_prefix,
        lexical=state.lexical,
        analyzer=MILVUS_ANALYZER if state.lexical == "milvus" else ANALYZER,
        milvus_version=state.milvus_version,
        milvus_uri="" if is_server(state.uri) else resolved_uri(state.uri),
    )


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


def _fingerprint(parts: Iterable[object], max_chars: int) -> str:
    digest = hashlib.sha256(json.dumps([FORMAT, EMBEDDING_MODEL, max_chars]).encode())
    for part in parts:
        digest.update(json.dumps(part, default=str).encode())
    return digest.hexdigest()


def path_source(path: Path, fmt: str, max_chars: int = PASSAGE_CHARS) -> str:
    """Fingerprint of a corpus path: its files' names, sizes and times, the format, settings."""
    files = shards(path)
    stats = [(str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    return _fingerprint([fmt, *stats], max_chars)


def build_index(
    docs: Sequence[Evidence],
    collection: str,
    milvus_uri: str = "",
    progress: Callable[[int], None] | None = None,
    *,
    lexical: str = "",
    encode: Encoder | None = None,
) -> int:
    """Index ``docs`` (in memory) under ``collection`` (dense and BM25); returns the passages.

    ``lexical`` and ``encode`` as for ``ingest``.
    """
    source = _fingerprint(([d["id"], d["title"], d["text"]] for d in docs), PASSAGE_CHARS)
    return ingest(
        docs,
        collection,
        milvus_uri,
        source=source,
        progress=progress,
        lexical=lexical,
        encode=encode,
    ).passages


def index_path(
    path: Path,
    collection: str,
    milvus_uri: str = "",
    progress: Callable[[int], None] | None = None,
    *,
    fmt: str = "auto",
    problem: Problem | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    on_embedded: Callable[[int, int], None] | None = None,
    lexical: str = "",
) -> Manifest:
    """Stream a corpus file or folder (any ``corpus.FORMATS``) into ``collection``.

    Killed, it resumes when called again with the same path (files unchanged) and settings;
    ``lexical`` as for ``ingest``.
    """
    source = path_source(path, fmt)
    return ingest(
        iter_documents(path, fmt, problem),
        collection,
        milvus_uri,
        source=source,
        progress=progress,
        on_batch=on_batch,
        on_embedded=on_embedded,
        lexical=lexical,
    )


def index_ready(collection: str, milvus_uri: str = "", lexical: bool = True) -> bool:
    """Whether ``collection`` has a live, compatible index (dense, and ``lexical`` too)."""
    try:
        manifest = live_manifest(collection, milvus_uri)
    except (IndexMissingError, IndexMismatchError):
        return False
    on_disk = manifest.lexical == "bm25s"
    if lexical and on_disk and not lexical_ready(bm25_dir(collection, manifest.generation)):
        return False
    return collection_exists(collection, milvus_uri)


def ensure_index(collection: str, milvus_uri: str = "", lexical: bool = True) -> None:
    """Make sure ``collection`` exists; the bundled default collection is built on first use.

    ``lexical=False``: only the dense part is needed (a bm25s-engine index used from a
    machine that does not hold its BM25 files). An index whose BM25 lives in Milvus needs
    nothing on this machine.

    Raises:
        IndexMissingError: any other collection that was never indexed.
        IndexMismatchError: any other collection built by an incompatible version, or whose
            lexical files are not on this machine.
    """
    with _lock:
        if index_ready(collection, milvus_uri, lexical):
            return
        if collection != DEFAULT_COLLECTION:
            manifest = live_manifest(collection, milvus_uri)  # raises the precise error
            folder = bm25_dir(collection, manifest.generation)
            missing = manifest.lexical == "bm25s" and not lexical_ready(folder)
            if lexical and missing and collection_exists(collection, milvus_uri):
                raise IndexMismatchError(
                    f"the lexical index of {collection!r} is not on this machine ({folder}): "
                    "share FACTDEBATE_HOME, copy that folder, use rag_engine=dense, or rebuild "
                    "it on a Milvus with full-text search (2.5+ or Milvus Lite 3: lexical=milvus)"
                )
            raise IndexMissingError(collection)
        build_index(load_documents(default_corpus_path()), collection, milvus_uri)


def stored_passages(collection: str, generation: str) -> int:
    """Passages in the store of one generation (tests count resumed builds with it)."""
    offsets = bm25_dir(collection, generation) / "offsets.u64"
    return max(os.path.getsize(offsets) // 8 - 1, 0) if offsets.exists() else 0
