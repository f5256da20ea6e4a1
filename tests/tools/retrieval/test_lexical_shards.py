"""Sharded BM25 builds: one shard held at a time, shard statistics, resumed builds, old layout."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import factdebate.tools.retrieval.lexical as lexical
from factdebate.tools.retrieval.lexical import (
    PassageStore,
    PassageWriter,
    build_bm25,
    build_lexical,
    fit_lexical,
    open_lexical,
)
from factdebate.tools.retrieval.manifest import (
    BM25_B,
    BM25_K1,
    BM25_METHOD,
    IndexMismatchError,
    corpus_hash,
)

WORDS = [
    "solar",
    "lunar",
    "tide",
    "ocean",
    "planet",
    "orbit",
    "ring",
    "storm",
    "volcano",
    "basalt",
    "lava",
    "ice",
]
QUERIES = ("solar storm", "lava basalt ice", "orbit", "tide ocean ring", "nothing matches")


def _docs(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "id": f"p{i}",
            "doc": f"d{i // 2}",
            "title": rng.choice(WORDS),
            "text": " ".join(rng.choices(WORDS, k=rng.randint(3, 20))),
        }
        for i in range(count)
    ]


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> int:
    """Shards of 64 passages, so a 300-passage corpus spans five."""
    monkeypatch.setattr(lexical, "SHARD_PASSAGES", 64)
    return 64


def test_a_build_fits_one_shard_at_a_time_each_with_its_own_statistics(
    tmp_path: Path, small_shards: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _docs(300)
    fitted_sizes: list[int] = []
    fit_ids = lexical._fit_ids

    def counting(ids: list[Any], vocab: dict[str, int], k1: float, b: float) -> Any:
        fitted_sizes.append(len(ids))
        return fit_ids(ids, vocab, k1, b)

    monkeypatch.setattr(lexical, "_fit_ids", counting)
    build_bm25(tmp_path / "bm25", docs)  # type: ignore[arg-type]
    assert max(fitted_sizes) == small_shards  # never the whole corpus at once
    assert sorted(set(fitted_sizes)) == [300 - 4 * small_shards, small_shards]
    disk = open_lexical(tmp_path / "bm25")
    assert [(s.start, s.count) for s in disk.shards] == [
        (0, 64),
        (64, 64),
        (128, 64),
        (192, 64),
        (256, 44),
    ]
    assert disk.sha256 == corpus_hash(docs) and list(disk.passages) == docs
    memory = fit_lexical(docs)  # type: ignore[arg-type]
    for query in QUERIES:
        scores = disk.scores(query)
        assert scores.tolist() == pytest.approx(memory.scores(query).tolist())
        assert disk.rank(query, 5) == memory.rank(query, 5)
        for shard in disk.shards:  # each slice scores like an index of that shard alone
            alone = fit_lexical(docs[shard.start : shard.start + shard.count])  # type: ignore[arg-type]
            part = scores[shard.start : shard.start + shard.count]
            assert part.tolist() == pytest.approx(alone.scores(query).tolist())


def test_one_shard_scores_exactly_like_the_unsharded_index(tmp_path: Path) -> None:
    docs = _docs(300)
    build_bm25(tmp_path / "bm25", docs)  # type: ignore[arg-type]
    disk = open_lexical(tmp_path / "bm25")
    assert len(disk.shards) == 1
    import bm25s

    whole = fit_lexical(docs)  # type: ignore[arg-type]
    text = bm25s.BM25(method=BM25_METHOD, k1=BM25_K1, b=BM25_B)
    text.index(lexical.tokenize([d["text"] for d in docs]), show_progress=False)
    tokens = lexical.tokenize(["solar storm"])[0]
    assert disk.shards[0].text.get_scores(tokens).tolist() == pytest.approx(
        text.get_scores(tokens).tolist()
    )
    assert disk.scores("solar storm").tolist() == pytest.approx(
        whole.scores("solar storm").tolist()
    )


def test_a_rebuild_keeps_finished_shards_and_refits_only_what_changed(
    tmp_path: Path, small_shards: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _docs(300)
    target = tmp_path / "bm25"
    build_bm25(target, docs)  # type: ignore[arg-type]
    before = {q: open_lexical(target).scores(q).tolist() for q in QUERIES}
    refitted: list[int] = []
    fit_shard = lexical._fit_shard

    def counting(passages: Any, start: int, *args: Any) -> Any:
        refitted.append(start)
        return fit_shard(passages, start, *args)

    monkeypatch.setattr(lexical, "_fit_shard", counting)
    shutil.rmtree(target / "shard-00002")  # a build killed before this shard was saved
    (target / "shard-00004" / "shard.json").write_text("{not json")  # or while writing it
    assert build_lexical(target) == corpus_hash(docs)
    assert refitted == [128, 256]
    after = open_lexical(target)
    assert {q: after.scores(q).tolist() for q in QUERIES} == before

    refitted.clear()  # the store rewritten: its second shard now holds other passages
    changed = [*docs[:70], {**docs[70], "text": "volcano volcano volcano"}, *docs[71:]]
    for name in ("passages.jsonl", "offsets.u64"):
        (target / name).unlink()
    writer = PassageWriter(target)
    writer.append(changed)  # type: ignore[arg-type]
    writer.close()
    assert build_lexical(target) == corpus_hash(changed)
    assert refitted == [64]  # same range, other passages: only that shard is fitted again
    rebuilt, memory = open_lexical(target), fit_lexical(changed)  # type: ignore[arg-type]
    for query in (*QUERIES, "volcano"):
        assert rebuilt.scores(query).tolist() == pytest.approx(memory.scores(query).tolist())
    refitted.clear()
    build_lexical(target)
    assert refitted == []  # nothing changed: every shard kept, only hashed


def test_fewer_passages_than_before_drop_the_shards_beyond(
    tmp_path: Path, small_shards: int
) -> None:
    target = tmp_path / "bm25"
    build_bm25(target, _docs(300))  # type: ignore[arg-type]
    build_bm25(target, _docs(100))  # type: ignore[arg-type]
    assert sorted(p.name for p in target.glob("shard-*")) == ["shard-00000", "shard-00001"]
    assert len(open_lexical(target).passages) == 100


def test_an_index_from_before_sharding_opens_as_one_shard(tmp_path: Path) -> None:
    docs = _docs(120)
    target = tmp_path / "bm25"
    build_bm25(target, docs)  # type: ignore[arg-type]
    expected = open_lexical(target).scores("lava basalt").tolist()
    for name in ("text", "title"):  # the layout an earlier release wrote
        (target / "shard-00000" / name).rename(target / name)
    shutil.rmtree(target / "shard-00000")
    meta = json.loads((target / "lexical.json").read_text())
    (target / "lexical.json").write_text(
        json.dumps({k: meta[k] for k in ("passages", "corpus_sha256")})
    )
    old = open_lexical(target)
    assert len(old.shards) == 1 and old.scores("lava basalt").tolist() == pytest.approx(expected)


def test_shards_that_miss_passages_are_refused(tmp_path: Path, small_shards: int) -> None:
    target = tmp_path / "bm25"
    build_bm25(target, _docs(100))  # type: ignore[arg-type]
    meta = json.loads((target / "lexical.json").read_text())
    meta["shards"] = meta["shards"][:1]
    (target / "lexical.json").write_text(json.dumps(meta))
    with pytest.raises(IndexMismatchError, match="cover 64 of its 100 passages"):
        open_lexical(target)


def test_iter_from_reads_the_tail_of_the_store(tmp_path: Path) -> None:
    docs = _docs(10)
    writer = PassageWriter(tmp_path)
    writer.append(docs)  # type: ignore[arg-type]
    writer.close()
    store = PassageStore(tmp_path)
    assert list(store.iter_from(7)) == docs[7:]
    assert list(store.iter_from(10)) == []


def test_the_served_index_scores_exactly_like_the_in_memory_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from factdebate.tools.retrieval.lexical import lexical_index
    from factdebate.tools.retrieval.manifest import Manifest, bm25_dir, new_generation
    from factdebate.tools.retrieval.manifest_store import live_manifest, write_manifest

    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path))
    docs = _docs(300)
    generation = new_generation()
    build_bm25(bm25_dir("store", generation), docs)  # type: ignore[arg-type]
    write_manifest(Manifest("store", generation, corpus_hash(docs), passages=300, documents=150))
    disk = lexical_index(live_manifest("store"))
    assert isinstance(disk.passages, PassageStore) and list(disk.passages) == docs
    memory = fit_lexical(docs)  # type: ignore[arg-type]
    for query in QUERIES:
        assert disk.rank(query, 5) == memory.rank(query, 5)
        assert disk.scores(query).tolist() == pytest.approx(memory.scores(query).tolist())
