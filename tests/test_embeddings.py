"""The shared embeddings remember short calls: each text is embedded once, big batches pass."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from tools.embeddings import SHORT_CALL, RememberingEmbeddings


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
