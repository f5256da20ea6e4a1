"""Stemmed two-field BM25 (bm25s) over an on-disk passage store, served memory-mapped."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any, overload

from factdebate.tools.core.files import write_atomic
from factdebate.tools.retrieval.manifest import (
    BM25_B,
    BM25_K1,
    BM25_METHOD,
    IndexMismatchError,
    Manifest,
    bm25_dir,
    corpus_hash,
    hashed_line,
)
from factdebate.tools.retrieval.ranking import Passage, best_per_document

_lock = threading.Lock()
TITLE_WEIGHT = 0.5  # title field's BM25 weight next to the text's (tuned on SciFact train)
FETCH_DOCS = 100  # documents each engine hands to fusion
TOKENIZE_CHUNK = 4096  # passages tokenized at a time while building
SHARD_PASSAGES = 200_000  # passages per BM25 shard: a build holds one shard's tokens at a time
MAX_PASSAGE_BYTES = 1024**2  # longest stored passage line read back
_PASSAGES, _OFFSETS, _META, _SHARD = "passages.jsonl", "offsets.u64", "lexical.json", "shard.json"


@cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-case word tokens without English stopwords, Snowball-stemmed (the one analyzer)."""
    import bm25s

    tokens: list[list[str]] = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )
    return tokens


class PassageStore(Sequence[Passage]):
    """Passages on disk, one JSON line each, read by position through an offsets file."""

    def __init__(self, folder: Path) -> None:
        """Open the store in ``folder`` (offsets memory-mapped; passages read on demand)."""
        import numpy as np

        self.folder = folder
        size = (folder / _OFFSETS).stat().st_size
        self._offsets = (
            np.memmap(folder / _OFFSETS, dtype="<u8", mode="r")
            if size
            else np.zeros(1, dtype="<u8")
        )
        self._fd = os.open(folder / _PASSAGES, os.O_RDONLY)

    def __del__(self) -> None:
        """Close the passages file."""
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def __len__(self) -> int:
        """How many passages the store holds."""
        return max(len(self._offsets) - 1, 0)

    @overload
    def __getitem__(self, index: int) -> Passage: ...

    @overload
    def __getitem__(self, index: slice) -> list[Passage]: ...

    def __getitem__(self, index: int | slice) -> Passage | list[Passage]:
        """The passage at ``index`` (or a list for a slice)."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = int(index)
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(index)
        start, end = int(self._offsets[position]), int(self._offsets[position + 1])
        if end - start > MAX_PASSAGE_BYTES:
            raise IndexMismatchError(f"passage {position} in {self.folder} is oversized")
        passage: Passage = json.loads(os.pread(self._fd, end - start, start))
        return passage

    def __iter__(self) -> Iterator[Passage]:
        """Every passage in order, read sequentially."""
        return self.iter_from(0)

    def iter_from(self, start: int) -> Iterator[Passage]:
        """The passages from position ``start`` on, read sequentially."""
        count = len(self)
        with (self.folder / _PASSAGES).open("rb") as handle:
            if start < count:
                handle.seek(int(self._offsets[start]))
            for _ in range(start, count):
                yield json.loads(handle.readline(MAX_PASSAGE_BYTES + 1))


class PassageWriter:
    """Append passages to a store; ``commit`` makes them durable, ``truncate`` undoes a tail."""

    def __init__(self, folder: Path) -> None:
        """Open (or create) the store in ``folder`` for appending."""
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._passages = (folder / _PASSAGES).open("ab")
        self._offsets = (folder / _OFFSETS).open("ab")
        if self._offsets.tell() == 0:
            self._offsets.write((0).to_bytes(8, "little"))
        self._end = self._passages.tell()

    def append(self, passages: Iterable[Passage]) -> None:
        """Write passages after the last one."""
        for passage in passages:
            line = json.dumps(passage, ensure_ascii=False).encode("utf-8") + b"\n"
            self._passages.write(line)
            self._end += len(line)
            self._offsets.write(self._end.to_bytes(8, "little"))

    def commit(self) -> None:
        """Flush and fsync both files: what was appended survives a kill from now on."""
        for handle in (self._passages, self._offsets):
            handle.flush()
            os.fsync(handle.fileno())

    def truncate(self, count: int) -> None:
        """Keep the first ``count`` passages only (a resumed build drops an unfinished tail)."""
        self.commit()
        with (self.folder / _OFFSETS).open("rb") as handle:
            handle.seek(8 * count)
            raw = handle.read(8)
        end = int.from_bytes(raw, "little") if len(raw) == 8 else 0
        if len(raw) != 8:
            raise IndexMismatchError(f"passage store {self.folder} holds fewer than {count}")
        self._passages.truncate(end)
        self._offsets.truncate(8 * (count + 1))
        self._passages.seek(end)
        self._offsets.seek(8 * (count + 1))
        self._end = end
        self.commit()

    def close(self) -> None:
        """Commit and close (once: closing a closed writer does nothing)."""
        if self._passages.closed:
            return
        self.commit()
        self._passages.close()
        self._offsets.close()


def _fit_ids(docs: list[array[int]], vocab: dict[str, int], k1: float, b: float) -> Any | None:
    """A BM25 index over token-id arrays, or None when no document has a searchable word."""
    import bm25s

    if not vocab or not any(docs):
        return None
    retriever = bm25s.BM25(method=BM25_METHOD, k1=k1, b=b)
    retriever.index((docs, vocab), show_progress=False)
    return retriever


@dataclass(frozen=True)
class Shard:
    """BM25 over passages ``start`` to ``start + count``, scored with this shard's statistics."""

    start: int
    count: int
    text: Any
    title: Any


def _fit_shard(
    passages: Iterable[Passage], start: int, k1: float, b: float, digests: Sequence[Any] = ()
) -> Shard:
    """Fit one shard's text and title fields, tokenizing a chunk at a time into 4-byte ids.

    Every passage read also goes into each hash object in ``digests``.
    """
    ids: dict[str, list[array[int]]] = {"text": [], "title": []}
    vocab: dict[str, dict[str, int]] = {"text": {}, "title": {}}
    chunk: list[Passage] = []
    count = 0

    def flush() -> None:
        for name in ("text", "title"):
            words = vocab[name]
            for tokens in tokenize([p[name] for p in chunk]):
                ids[name].append(array("I", (words.setdefault(t, len(words)) for t in tokens)))
        chunk.clear()

    for passage in passages:
        line = hashed_line(passage)
        for digest in digests:
            digest.update(line)
        chunk.append(passage)
        count += 1
        if len(chunk) >= TOKENIZE_CHUNK:
            flush()
    flush()
    return Shard(
        start,
        count,
        _fit_ids(ids["text"], vocab["text"], k1, b),
        _fit_ids(ids["title"], vocab["title"], k1, b),
    )


def fit_lexical(
    passages: Sequence[Passage], k1: float = BM25_K1, b: float = BM25_B
) -> LexicalIndex:
    """The two-field (text, title) BM25 index of ``passages``, in memory, sharded as on disk.

    A field without a single searchable word is left out and scores zero. ``k1`` and ``b``
    are the shipped settings unless a tuning run asks for others.
    """
    digest = hashlib.sha256()
    shards = tuple(
        _fit_shard(passages[start : start + SHARD_PASSAGES], start, k1, b, [digest])
        for start in range(0, len(passages), SHARD_PASSAGES)
    )
    return LexicalIndex(shards, list(passages), digest.hexdigest())


def _marker(folder: Path) -> dict[str, Any]:
    try:
        found: dict[str, Any] = json.loads((folder / _SHARD).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return found


def build_lexical(target: Path) -> str:
    """Build the sharded BM25 index of the passage store in ``target``; returns its SHA-256.

    Shards are fitted one after another, so memory is bounded by ``SHARD_PASSAGES``, not by
    the corpus. A finished shard is saved with a marker (its range and SHA-256), so a build
    killed part-way keeps the shards it finished when run again on the same store.
    """
    store = PassageStore(target)
    digest = hashlib.sha256()
    shards: list[dict[str, Any]] = []
    for number, start in enumerate(range(0, len(store), SHARD_PASSAGES)):
        count = min(SHARD_PASSAGES, len(store) - start)
        folder = target / f"shard-{number:05d}"
        expected = {"start": start, "count": count}
        marker = _marker(folder)
        own = hashlib.sha256()
        digests: tuple[Any, ...] = (digest, own)  # hashed while fitting, unless hashed below
        if {k: marker.get(k) for k in expected} == expected:  # finished before: same passages?
            for passage in islice(store.iter_from(start), count):
                line = hashed_line(passage)
                digest.update(line)
                own.update(line)
            if own.hexdigest() == marker.get("sha256"):
                shards.append({**expected, "folder": folder.name})
                continue
            digests = ()
        passages = islice(store.iter_from(start), count)
        fitted = _fit_shard(passages, start, BM25_K1, BM25_B, digests)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for name in ("text", "title"):
            field_index = getattr(fitted, name)
            if field_index is not None:
                field_index.save(str(folder / name), show_progress=False)
        write_atomic(folder / _SHARD, json.dumps({**expected, "sha256": own.hexdigest()}))
        shards.append({**expected, "folder": folder.name})
    kept = {shard["folder"] for shard in shards}
    for stale in [*target.glob("shard-*"), target / "text", target / "title"]:
        if stale.name not in kept:
            shutil.rmtree(stale, ignore_errors=True)
    sha = digest.hexdigest()
    meta = {"passages": len(store), "corpus_sha256": sha, "shards": shards}
    write_atomic(target / _META, json.dumps(meta))
    return sha


def build_bm25(target: Path, passages: Sequence[Passage]) -> None:
    """Write ``passages`` as a new store in ``target`` and build its BM25 index (shipped k1, b)."""
    shutil.rmtree(target, ignore_errors=True)
    writer = PassageWriter(target)
    writer.append(passages)
    writer.close()
    build_lexical(target)


def lexical_ready(target: Path) -> bool:
    """Whether ``target`` holds a finished lexical index."""
    return (target / _META).exists() and (target / _PASSAGES).exists()


@dataclass(frozen=True)
class LexicalIndex:
    """A loaded, sharded two-field BM25 index and the passages it ranks."""

    shards: tuple[Shard, ...]
    passages: Sequence[Passage]
    sha256: str

    def scores(self, query: str, title_weight: float = TITLE_WEIGHT) -> Any:
        """BM25 score of every passage: text field plus ``title_weight`` x title field."""
        import numpy as np

        tokens = tokenize([query])[0]
        total = np.zeros(len(self.passages), dtype=np.float32)
        if not tokens:
            return total
        with _lock:  # bm25s scoring shares numpy buffers
            for shard in self.shards:
                view = total[shard.start : shard.start + shard.count]
                for field_index, weight in ((shard.text, 1.0), (shard.title, title_weight)):
                    if field_index is not None:
                        view += weight * field_index.get_scores(tokens)
        return total

    def rank(self, query: str, k: int, title_weight: float = TITLE_WEIGHT) -> list[tuple[str, int]]:
        """The ``k`` best documents as ``(document id, best passage)``; zero scores dropped."""
        import numpy as np

        scores = self.scores(query, title_weight)
        candidates = np.flatnonzero(scores > 0)  # usually far fewer than the passages
        positive = len(candidates)
        if positive == 0:
            return []
        scores = scores[candidates]
        depth = min(positive, max(4 * k, 200))
        while True:  # widen until k distinct documents or every positive passage is in
            top = np.argpartition(-scores, depth - 1)[:depth]
            top = candidates[top[np.argsort(-scores[top], kind="stable")]]
            ranked = best_per_document(((self.passages[i]["doc"], int(i)) for i in top), k)
            if len(ranked) == k or depth == positive:
                return ranked
            depth = min(positive, depth * 4)


def open_lexical(target: Path) -> LexicalIndex:
    """Open the lexical index built in ``target``: matrices memory-mapped, passages on disk.

    An index from before sharding (one ``text`` and ``title`` pair beside the store) opens
    as a single shard.

    Raises:
        OSError, ValueError: the folder is missing, unreadable or not a finished index.
        IndexMismatchError: its shards do not cover its passage store.
    """
    import bm25s

    meta = json.loads((target / _META).read_text("utf-8"))
    passages = PassageStore(target)
    ranges = meta.get("shards") or [{"start": 0, "count": len(passages), "folder": "."}]
    shards = []
    for shard in ranges:
        folder = target / str(shard["folder"])
        text, title = (
            bm25s.BM25.load(str(folder / name), mmap=True, show_progress=False)
            if (folder / name).exists()
            else None
            for name in ("text", "title")
        )
        shards.append(Shard(int(shard["start"]), int(shard["count"]), text, title))
    covered = sum(shard.count for shard in shards)
    if covered != len(passages):
        raise IndexMismatchError(
            f"the BM25 shards in {target} cover {covered} of its {len(passages)} passages"
        )
    return LexicalIndex(tuple(shards), passages, str(meta.get("corpus_sha256", "")))


@cache
def _load(collection: str, generation: str) -> LexicalIndex:
    target = bm25_dir(collection, generation)
    try:
        return open_lexical(target)
    except IndexMismatchError as exc:
        raise IndexMismatchError(
            f"lexical index of {collection!r} does not match its manifest ({exc}): re-run "
            f"`factdebate index PATH --collection {collection}`"
        ) from exc
    except (OSError, ValueError) as exc:
        raise IndexMismatchError(
            f"lexical index of {collection!r} is unreadable or not on this machine "
            f"({type(exc).__name__} in {target}): re-run `factdebate index PATH --collection "
            f"{collection}`"
        ) from exc


def lexical_index(manifest: Manifest) -> LexicalIndex:
    """Load the live lexical index of a collection, checked against its manifest.

    Raises:
        IndexMismatchError: passage count or corpus hash differ from the manifest, or the
            collection keeps its BM25 index in Milvus.
    """
    if manifest.lexical != "bm25s":
        raise IndexMismatchError(
            f"{manifest.collection!r} keeps its BM25 index in Milvus, not in bm25s shards: "
            f"rebuild it with --lexical bm25s for this"
        )
    index = _load(manifest.collection, manifest.generation)
    if len(index.passages) != manifest.passages or index.sha256 != manifest.corpus_sha256:
        _load.cache_clear()
        raise IndexMismatchError(
            f"lexical index of {manifest.collection!r} does not match its manifest "
            f"({len(index.passages)} passages, manifest {manifest.passages}): re-run "
            f"`factdebate index PATH --collection {manifest.collection}`"
        )
    return index


def store_hash(target: Path) -> str:
    """SHA-256 of a passage store's passages (as ``manifest.corpus_hash`` computes it)."""
    return corpus_hash(PassageStore(target))
