"""The retrieval tuning scripts: fusion, BM25 and encoder tuning choose on train, report dev."""

from __future__ import annotations

from factdebate.tools.core.records import Evidence
from factdebate.tools.retrieval.index import split_passages
from tests.conftest import data_or_skip


def doc(ident: str, title: str, text: str) -> Evidence:
    return Evidence(id=ident, title=title, text=text, source="", score=0.0)


def test_fusion_tuning_chooses_on_train_and_reports_dev_at_that_point() -> None:
    """The tuning benchmark picks the grid point best on train, then scores dev there."""
    from benchmarks.fusion_tuning import tune

    others = [f"x{i}" for i in range(12)]
    # Train: the dense ranking finds the gold document, BM25 ranks it 10th -> favour dense.
    train = [({"g"}, ["g", *others], [*others[:9], "g", *others[9:]])] * 3
    # Dev: the opposite, so the train-chosen point loses on dev and the report shows it.
    dev = [({"g"}, [*others[:9], "g", *others[9:]], ["g", *others])] * 2
    result = tune(train, dev, weights=(0.5, 2.0), ks=(1, 60))
    assert result["chosen"]["dense_weight"] == 2.0
    assert result["chosen"]["train"][0] == 1.0
    assert result["chosen"]["dev"][0] < 1.0
    assert result["claims"] == {"train": 3, "dev": 2}
    assert len(result["grid"]) == 4


def test_bm25_tuning_chooses_length_normalisation_on_train_and_reports_dev() -> None:
    """b decides whether one long, repetitive abstract beats short ones; train decides b."""
    from benchmarks.bm25_tuning import tune
    from factdebate.tools.retrieval.manifest import BM25_B, BM25_K1

    filler = " ".join(f"filler{i}" for i in range(60))
    docs = [
        doc("s1", "", "alpha beta"),
        doc("s2", "", "alpha beta gamma"),
        doc("s3", "", "alpha beta gamma delta"),
        doc("long", "", f"alpha alpha alpha {filler}"),
    ]
    claims = {"train": [({"long"}, "alpha")], "dev": [({"s3"}, "alpha")]}
    result = tune(split_passages(docs), claims, k1s=(1.2,), bs=(0.1, 0.9))
    by_b = {row["b"]: row for row in result["grid"]}
    # Weak length normalisation ranks the long abstract first, s3 fourth; strong, the reverse.
    assert by_b[0.1]["train"][0] == 1.0 and by_b[0.1]["dev"][0] == 0.0
    assert by_b[0.9]["train"][0] == 0.0 and by_b[0.9]["dev"][0] == 1.0
    assert (result["chosen"]["k1"], result["chosen"]["b"]) == (1.2, 0.1)
    assert (result["default"]["k1"], result["default"]["b"]) == (BM25_K1, BM25_B)
    assert result["claims"] == {"train": 1, "dev": 1}


def test_encoder_tuning_pairs_each_claim_with_gold_and_best_ranked_wrong_abstract() -> None:
    """Positives are the gold abstracts' first passages; the negative is the top non-gold."""
    import numpy as np

    from benchmarks.encoder_tuning import rank_all, split_train, triples

    texts, docs = ["g1 a", "g1 b", "g2", "w1", "w2"], ["g1", "g1", "g2", "w1", "w2"]
    rows = triples([({"g1", "g2"}, "claim")], texts, docs, [["w2", "g1", "w1"]])
    assert rows == {
        "anchor": ["claim", "claim"],
        "positive": ["g1 a", "g2"],
        "negative": ["w2", "w2"],
    }

    class Words:
        def rank(self, query: str, k: int) -> list[tuple[str, int]]:
            return [("w1", 3)]

    vectors = np.eye(5, dtype=np.float32)
    dense, hybrid = rank_all(
        [({"g2"}, "q")], vectors, docs, lambda qs: np.array([[0, 0.5, 1, 0.2, 0.1]]), Words()
    )
    assert dense == [["g2", "g1", "w1", "w2"]]  # passages grouped by document
    assert hybrid[0][:2] == ["w1", "g2"]  # w1 is in both rankings, so fusion lifts it

    fit, held = data_or_skip(lambda: split_train(0.2, seed=0), "SciFact train")
    assert len(held) == round(0.2 * (len(fit) + len(held))) and not {c for _, c in fit} & {
        c for _, c in held
    }
    assert split_train(0.2, seed=0) == (fit, held)  # seeded: the same split every run
