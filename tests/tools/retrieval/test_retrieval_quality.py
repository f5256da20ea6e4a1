"""Retrieval quality: distinct documents per top-k, stemmed two-field BM25, hybrid fusion."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdebate.tools.core.records import Evidence
from factdebate.tools.dispatch import run_tool
from factdebate.tools.retrieval.index import build_index, split_passages
from factdebate.tools.retrieval.lexical_search import OfflineSearch, build_bm25, tokenize
from factdebate.tools.retrieval.manifest import Manifest, bm25_dir, corpus_hash, new_generation
from factdebate.tools.retrieval.manifest_store import write_manifest
from factdebate.tools.retrieval.ranking import Passage, best_per_document, rrf


def doc(ident: str, title: str, text: str) -> Evidence:
    return Evidence(id=ident, title=title, text=text, source="", score=0.0)


def lexical_only(collection: str, docs: list[Evidence]) -> None:
    """Index ``docs`` for BM25 alone (no embeddings) and make that generation live."""
    passages = split_passages(docs)
    generation = new_generation()
    build_bm25(bm25_dir(collection, generation), passages)
    write_manifest(
        Manifest(
            collection=collection,
            generation=generation,
            corpus_sha256=corpus_hash(passages),
            passages=len(passages),
            documents=len(docs),
        )
    )


def test_best_per_document_keeps_each_documents_best_passage_until_k() -> None:
    ranked = [("a", 0), ("a", 1), ("b", 2), ("a", 3), ("c", 4), ("d", 5)]
    assert best_per_document(ranked, 3) == [("a", 0), ("b", 2), ("c", 4)]
    assert best_per_document(ranked[:2], 3) == [("a", 0)]


def test_weighted_reciprocal_rank_fusion() -> None:
    # b: 1/62 + 1/61 beats a: 1/61 + 1/63; d and c appear once, d ranked higher
    fused = [d for d, _ in rrf([["a", "b", "c"], ["b", "d", "a"]])]
    assert fused == ["b", "a", "d", "c"]
    # a heavy weight on the first ranking lets its order win
    assert [d for d, _ in rrf([["a", "b"], ["b", "a"]], [3.0, 1.0])] == ["a", "b"]
    with pytest.raises(ValueError, match="2 rankings but 1 weights"):
        rrf([["a"], ["b"]], [1.0])


def test_tokenizer_stems_and_drops_stopwords() -> None:
    assert tokenize(["The proteins inhibiting the growth"]) == [["protein", "inhibit", "growth"]]


def test_stemmed_bm25_matches_other_word_forms(data_home: Path) -> None:
    lexical_only(
        "stems",
        [
            doc("1", "Kinases", "Aspirin inhibits the growth of tumour cells."),
            doc("2", "Weather", "Rain falls in the spring."),
        ],
    )
    hits = OfflineSearch("stems").search("inhibition of growing tumours", 3)
    assert [h["id"] for h in hits] == ["1"]  # unstemmed, no word of the query matches
    assert hits[0]["source"] == "bm25" and hits[0]["score"] > 0


def test_title_is_a_searchable_field(data_home: Path) -> None:
    lexical_only(
        "titles",
        [
            doc("1", "Metformin", "The drug lowers blood sugar in adults."),
            doc("2", "Insulin", "A hormone made in the pancreas."),
        ],
    )
    assert [h["id"] for h in OfflineSearch("titles").search("metformin", 2)] == ["1"]


def test_bm25_returns_distinct_documents_shown_by_their_best_passage(data_home: Path) -> None:
    long_text = " ".join(
        f"Paragraph {i} says vitamin D helps bones and vitamin D is made in skin."
        for i in range(60)
    )
    docs = [
        doc("long", "Vitamin D", long_text),
        doc("short", "Bones", "Vitamin D and calcium keep bones strong."),
        doc("other", "Skin", "Skin makes vitamin D in sunlight."),
    ]
    assert len(split_passages(docs)) > 4  # the long document is several passages
    lexical_only("grouped", docs)
    hits = OfflineSearch("grouped").search("vitamin D bones skin", 3)
    assert sorted(h["id"] for h in hits) == ["long", "other", "short"]
    assert all(len(h["text"]) <= 1200 for h in hits)  # a passage, not the whole document


def test_rag_engines_return_distinct_documents(data_home: Path) -> None:
    sentences = [
        "The Moon orbits the Earth every 27 days.",
        "The Moon's orbit around Earth is elliptical.",
        "Tides on Earth follow the Moon as it orbits.",
    ]
    moon = " ".join(sentences[i % 3] for i in range(90))  # several passages, all on topic
    docs = [
        doc("moon", "Moon", moon),
        doc("sun", "Sun", "The Sun is the star at the centre of the solar system."),
        doc("mars", "Mars", "Mars has two small moons, Phobos and Deimos."),
    ]
    build_index(docs, "sky")
    for engine, source in (("dense", "milvus"), ("hybrid", "hybrid")):
        hits = run_tool("rag", "What orbits the Earth?", k=3, collection="sky", rag_engine=engine)
        ids = [h["id"] for h in hits]
        assert ids[0] == "moon" and len(ids) == len(set(ids)) == 3, engine
        assert {h["source"] for h in hits} == {source}


@pytest.mark.parametrize("lexical", ["bm25s", "milvus"])
def test_hybrid_shows_real_passages_and_reads_texts_only_for_those_it_shows(
    data_home: Path, monkeypatch: pytest.MonkeyPatch, lexical: str
) -> None:
    import factdebate.tools.dispatch as retrieval
    import factdebate.tools.retrieval.vectorstore as store

    monkeypatch.setenv("FACTDEBATE_LEXICAL", lexical)

    docs = [
        doc("moon", "Moon", "The Moon orbits the Earth every 27 days."),
        doc("sun", "Sun", "The Sun is the star at the centre of the solar system."),
        doc("mars", "Mars", "Mars has two small moons, Phobos and Deimos."),
        doc("tide", "Tides", "Tides rise and fall as the Moon pulls on the oceans."),
        doc("ring", "Saturn", "Saturn's rings are made of ice and rock."),
    ]
    build_index(docs, "sky2")
    texts = {p["doc"]: p["text"] for p in split_passages(docs)}
    asked: list[list[str]] = []
    fetch = retrieval.passages_by_id

    def counting(manifest: Manifest, ids: list[str], uri: str = "") -> dict[str, Passage]:
        asked.append(list(ids))
        return fetch(manifest, ids, uri)

    monkeypatch.setattr(retrieval, "passages_by_id", counting)
    monkeypatch.setattr(store, "passages_by_id", counting)
    hits = retrieval.hybrid_search("sky2", "What orbits the Earth?", 2)
    assert len(hits) == 2 and hits[0]["id"] == "moon"
    assert all(h["text"] == texts[h["id"]] for h in hits)  # each the text of its document
    assert len(asked) == 1 and len(asked[0]) <= 2  # not the texts of every dense candidate


def test_unknown_rag_engine_is_refused(data_home: Path) -> None:
    with pytest.raises(ValueError, match="unknown rag_engine 'sparse'"):
        run_tool("rag", "q", k=3, collection="default", rag_engine="sparse")


def test_context_checks_rag_engine() -> None:
    from factdebate.nodes.context import Context

    assert Context().rag_engine == "hybrid" and Context(rag_engine="dense").rag_engine == "dense"
    with pytest.raises(ValueError, match="rag_engine must be dense or hybrid"):
        Context(rag_engine="bm25")  # type: ignore[arg-type]


def test_passages_keep_their_document(data_home: Path) -> None:
    parts = split_passages([doc("d#1", "T", "word " * 600)])
    assert len(parts) > 1 and {p["doc"] for p in parts} == {"d#1"}
    assert all(isinstance(p, dict) and set(p) == set(Passage.__annotations__) for p in parts)


def test_passages_embedded_shortest_first_keep_their_own_vectors(data_home: Path) -> None:
    """Embedding in length order must not shuffle which vector belongs to which passage."""
    topics = [
        "Volcanoes erupt molten rock called lava from the mantle of the Earth.",
        "Penguins are flightless birds living in the Southern Hemisphere.",
        "The violin is a string instrument played with a bow.",
        "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
        "Chess is a board game for two players on sixty-four squares.",
    ]
    # Longest first, so the embedding order is the reverse of the corpus order.
    docs = [doc(f"d{i}", "", " ".join([t] * (len(topics) - i))) for i, t in enumerate(topics)]
    build_index(docs, "order")
    for i, topic in enumerate(topics):
        hits = run_tool("rag", topic, k=1, collection="order", rag_engine="dense")
        assert [h["id"] for h in hits] == [f"d{i}"]
        assert hits[0]["text"] == docs[i]["text"]


def test_milvus_native_search_copies_the_collection_and_does_not_stem(data_home: Path) -> None:
    from factdebate.tools.retrieval.manifest_store import live_manifest
    from factdebate.tools.retrieval.milvus import locked_client
    from factdebate.tools.retrieval.milvus_native import (
        build_native,
        native_collection,
        native_rank,
    )

    docs = [
        doc("1", "Kinases", "Aspirin inhibits the growth of tumour cells."),
        doc("2", "Weather", "Rain falls in the spring and tumours are rare."),
        doc("3", "Moon", "The Moon orbits the Earth every 27 days."),
    ]
    build_index(docs, "native")
    manifest = live_manifest("native")
    first, _ = build_native(manifest)
    name, seconds = build_native(manifest)  # a rebuild replaces the earlier copy
    with locked_client() as client:
        copies = [c for c in client.list_collections() if c.startswith(native_collection(manifest))]
    assert copies == [name] and first != name and seconds > 0
    with locked_client() as client:
        assert int(client.get_collection_stats(name)["row_count"]) == manifest.passages
    assert native_rank(name, manifest, "aspirin growth", 3, "bm25") == ["1"]
    # Milvus Lite ignores the stemmer it was given: "inhibition" finds no "inhibits"
    assert native_rank(name, manifest, "inhibition", 3, "bm25") == []
    hybrid = native_rank(name, manifest, "What orbits the Earth?", 3, "hybrid")
    assert hybrid[0] == "3" and sorted(hybrid) == ["1", "2", "3"]
    with pytest.raises(ValueError, match="bm25 or hybrid"):
        native_rank(name, manifest, "moon", 3, "sparse")
