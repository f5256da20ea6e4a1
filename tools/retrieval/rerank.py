"""Cross-encoder reranking (sentence-transformers ``CrossEncoder``) of retrieved candidates."""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from factdebate.tools.core.loading import MODEL_LOADING
from factdebate.tools.core.records import Evidence, ModelConfigError
from factdebate.tools.retrieval.embeddings import MAX_NAME_CHARS, encoder_device, load_error

RERANK_DEPTH = 20
"""Fused candidates the cross-encoder re-scores before the top ``k`` are kept."""
MAX_PAIR_CHARS = 4000  # passage characters shown to the cross-encoder (it reads ~512 tokens)
_lock = threading.Lock()


@cache
def load_reranker(name: str) -> Any:
    """The cross-encoder ``name`` (model id or folder), loaded once; GPU float16 when present.

    Raises:
        ModelConfigError: a name too long, or a model that cannot be loaded (offline, not a
        cross-encoder).
    """
    if not name.strip() or len(name) > MAX_NAME_CHARS:
        raise ModelConfigError(f"rerank_model must be 1..{MAX_NAME_CHARS} characters")
    from sentence_transformers import CrossEncoder

    device = encoder_device()
    try:
        with MODEL_LOADING:
            model = CrossEncoder(name, device=device)
    except Exception as exc:  # hub, file and config errors come in many types
        raise load_error("rerank_model", name, exc) from exc
    if device == "cuda":
        model.model.half()
    return model


def rerank(name: str, query: str, docs: list[Evidence], k: int) -> list[Evidence]:
    """The ``k`` best of ``docs`` by the cross-encoder's score of (query, title + text).

    Ties keep the retriever's order; each document's score becomes the cross-encoder's.
    """
    if not docs:
        return []
    model = load_reranker(name)
    pairs = [(query, f"{d['title']}\n{d['text']}"[:MAX_PAIR_CHARS]) for d in docs]
    with _lock:  # one model object, shared by threads
        scores = model.predict(pairs, batch_size=32, show_progress_bar=False)
    order = sorted(range(len(docs)), key=lambda i: -float(scores[i]))
    return [Evidence(**{**docs[i], "score": float(scores[i])}) for i in order[:k]]
