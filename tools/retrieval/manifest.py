"""Per-collection manifests: safe names, the live index generation, and its consistency facts."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.home import data_home

FORMAT = 3  # bump when the stored layout or the tokenisation changes (3: on-disk passage store)
EMBEDDING_MODEL = "all-MiniLM-L6-v2"
BM25_METHOD = "lucene"  # bm25s scoring variant, baked into a saved index (idf never below 0)
BM25_K1 = 1.5  # term-frequency saturation (bm25s's default; tuned on SciFact train)
BM25_B = 0.5  # length normalisation (bm25s default 0.75; tuned on SciFact train)
ANALYZER = (
    f"bm25s {BM25_METHOD} k1={BM25_K1} b={BM25_B}, text and title fields; regex \\w\\w+, "
    "lowercase, English stopwords, Snowball English stemmer"
)
MILVUS_ANALYZER = (
    f"Milvus BM25 function k1={BM25_K1} b={BM25_B}, one field of title and text, analysed before "
    "Milvus: regex \\w\\w+, lowercase, English stopwords, Snowball English stemmer"
)
LEXICAL_ENGINES = ("milvus", "bm25s")
"""Where a collection's BM25 index lives: in the Milvus collection (a BM25 function over its
text, from Milvus 2.5 and Milvus Lite 3) or in bm25s shards under the building machine's home."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,62}")
_GENERATION = re.compile(r"g[0-9a-f]{12}")


class IndexMissingError(FactDebateError, LookupError):
    """The requested collection has not been indexed."""

    def __init__(self, collection: str) -> None:
        super().__init__(
            f"no index named {collection!r}: run `factdebate index PATH --collection {collection}`"
        )


class IndexUnavailableError(FactDebateError, RuntimeError):
    """The index exists (or should) but cannot be used now; retrieval must not go on without it."""


class IndexMismatchError(IndexUnavailableError):
    """The stored index disagrees with its manifest or with the installed engines."""


def check_name(collection: str) -> str:
    """Return ``collection`` if it is a safe name (a letter, then letters, digits, single '_').

    Raises:
        ValueError: anything else (path separators, dots, '__', over 63 characters).
    """
    if not _NAME.fullmatch(collection) or "__" in collection:
        raise SettingsError(
            f"bad collection name {collection!r}: use a letter followed by up to 62 letters, "
            "digits or single underscores"
        )
    return collection


def engine_versions() -> dict[str, str]:
    """Versions of the libraries that wrote (and must read) an index."""

    def installed(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "absent"

    return {p: installed(p) for p in ("bm25s", "pystemmer", "milvus-lite", "pymilvus")}


def hashed_line(passage: Mapping[str, Any]) -> bytes:
    """The bytes of one passage that ``corpus_hash`` digests (its id, title and text)."""
    return json.dumps([passage["id"], passage["title"], passage["text"]]).encode("utf-8") + b"\n"


def corpus_hash(passages: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 over the passages' ids, titles and texts, in order."""
    digest = hashlib.sha256()
    for p in passages:
        digest.update(hashed_line(p))
    return digest.hexdigest()


@dataclass
class Manifest:
    """What one built collection holds and how it was built."""

    collection: str
    generation: str
    corpus_sha256: str
    passages: int
    documents: int
    format: int = FORMAT
    embedding_model: str = (
        EMBEDDING_MODEL  # the encoder (factdebate.tools.retrieval.embeddings.EncoderSpec)
    )
    analyzer: str = ANALYZER
    engines: dict[str, str] = field(default_factory=engine_versions)
    build_s: dict[str, float] = field(default_factory=dict)
    dense_index: str = "AUTOINDEX"  # Milvus index type of the vectors (HNSW on a server)
    embedding_dim: int = 384  # the encoder's vector size, and the texts' prefixes it reads
    query_prefix: str = ""
    passage_prefix: str = ""
    lexical: str = "bm25s"  # one of LEXICAL_ENGINES
    milvus_version: str = ""  # the version Milvus reported at build time (engine chosen by it)
    milvus_uri: str = ""  # a Milvus Lite build's file (its home copy counts only for that file)

    @property
    def milvus_name(self) -> str:
        """The Milvus collection holding this generation's vectors."""
        return f"{self.collection}__{self.generation}"

    def check_engines(self) -> None:
        """Raise ``IndexMismatchError`` when the installed engines cannot read this index."""
        # The encoder is the index's own (any sentence-transformers model): queries load it
        # from here, and a run naming another is refused (factdebate.tools.dispatch.check_encoder).
        if self.lexical not in LEXICAL_ENGINES:
            raise IndexMismatchError(
                f"index {self.collection!r} names an unknown lexical engine {self.lexical!r}: "
                f"re-run `factdebate index PATH --collection {self.collection}`"
            )
        expected = MILVUS_ANALYZER if self.lexical == "milvus" else ANALYZER
        if (self.format, self.analyzer) != (FORMAT, expected):
            raise IndexMismatchError(
                f"index {self.collection!r} was built by another version (format "
                f"{self.format}, {self.embedding_model}): re-run `factdebate index PATH "
                f"--collection {self.collection}`"
            )


def new_generation() -> str:
    """A fresh generation tag for a build."""
    return "g" + secrets.token_hex(6)


def is_generation_of(milvus_name: str, collection: str) -> bool:
    """Whether ``milvus_name`` is some generation of ``collection``."""
    prefix, sep, tag = milvus_name.rpartition("__")
    return bool(sep) and prefix == collection and bool(_GENERATION.fullmatch(tag))


def manifest_path(collection: str, home: Path | None = None) -> Path:
    """Where the manifest of ``collection`` lives (under ``home``, else the data home, created)."""
    return (home or data_home()) / "manifests" / f"{check_name(collection)}.json"


def bm25_dir(collection: str, generation: str) -> Path:
    """Where one generation of the lexical index of ``collection`` lives."""
    return data_home() / "bm25" / f"{check_name(collection)}__{generation}"


def is_server(uri: str) -> bool:
    """Whether a Milvus URI names a server (shared by processes and machines), not Lite."""
    return "://" in uri
