"""Label, binary and retrieval metrics checked against hand-computed values."""

from __future__ import annotations

import pytest

from factdebate.bench.judging.metrics import binary_metrics, label_metrics, retrieval_metrics

S, R, N = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"


def test_label_metrics_hand_computed() -> None:
    gold = [S, S, S, R, R, N]
    pred = [S, S, R, R, None, "maybe?"]  # two unparsed: None and a non-label string
    m = label_metrics(gold, pred, [S, R, N])
    # correct: S,S (idx 0,1) and R (idx 3) -> 3/6
    assert m["n"] == 6
    assert m["accuracy"] == pytest.approx(0.5)
    assert m["unparsed"] == 2
    # SUPPORTS: tp=2, predicted S=2, support 3 -> P=1, R=2/3, F1=2*1*(2/3)/(5/3)=0.8
    assert m["per_class"][S] == pytest.approx(
        {"precision": 1.0, "recall": 2 / 3, "f1": 0.8, "support": 3}
    )
    # REFUTES: tp=1, predicted R=2 (idx 2,3), support 2 -> P=0.5, R=0.5, F1=0.5
    assert m["per_class"][R] == pytest.approx(
        {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    )
    # NEI: tp=0, never predicted -> P=0/0=0.0, R=0/1=0.0, F1=0.0
    assert m["per_class"][N] == pytest.approx(
        {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    )
    # macro-F1 = (0.8 + 0.5 + 0.0) / 3 = 0.4333...
    assert m["macro_f1"] == pytest.approx(1.3 / 3)
    assert m["confusion"] == {
        S: {S: 2, R: 1, N: 0, "UNPARSED": 0},
        R: {S: 0, R: 1, N: 0, "UNPARSED": 1},
        N: {S: 0, R: 0, N: 0, "UNPARSED": 1},
    }


def test_label_metrics_edge_cases() -> None:
    empty = label_metrics([], [], [S, R])
    assert empty["accuracy"] == 0.0 and empty["macro_f1"] == 0.0 and empty["unparsed"] == 0
    with pytest.raises(ValueError, match="items"):
        label_metrics([S], [], [S])
    with pytest.raises(ValueError, match="CONFLICTING"):
        label_metrics(["CONFLICTING"], [S], [S, R, N])


def test_binary_metrics_hand_computed() -> None:
    gold = [True, True, True, False, False]
    pred = [True, False, None, False, True]
    m = binary_metrics(gold, pred)
    # correct: idx 0 (T) and idx 3 (F) -> 2/5
    assert m["accuracy"] == pytest.approx(0.4)
    assert m["unparsed"] == 1
    # TRUE: tp=1, predicted TRUE=2 (idx 0,4), support 3 -> P=0.5, R=1/3, F1=2*(1/6)/(5/6)=0.4
    assert m["per_class"]["TRUE"] == pytest.approx(
        {"precision": 0.5, "recall": 1 / 3, "f1": 0.4, "support": 3}
    )
    # FALSE: tp=1, predicted FALSE=2 (idx 1,3), support 2 -> P=0.5, R=0.5, F1=0.5
    assert m["per_class"]["FALSE"] == pytest.approx(
        {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    )
    assert m["macro_f1"] == pytest.approx(0.45)  # (0.4 + 0.5) / 2


def test_retrieval_metrics_hand_computed() -> None:
    ranked = [["a", "b", "c"], ["x", "y", "g1", "g2"], ["p"], ["q"]]
    gold = [{"b"}, {"g1", "g2", "g3"}, set(), {"zz"}]
    m = retrieval_metrics(ranked, gold, ks=(1, 3, 10))
    # query 3 has no gold -> skipped; 3 queries scored
    assert m["queries"] == 3
    # recall@1: q1 0/1, q2 0/3, q4 0/1 -> 0
    assert m["recall@1"] == pytest.approx(0.0)
    # recall@3: q1 1/1, q2 1/3 (g1 at rank 3), q4 0 -> (1 + 1/3 + 0) / 3 = 4/9
    assert m["recall@3"] == pytest.approx(4 / 9)
    # recall@10: q1 1, q2 2/3, q4 0 -> (5/3) / 3 = 5/9
    assert m["recall@10"] == pytest.approx(5 / 9)
    # MRR@10: q1 1/2, q2 1/3, q4 0 -> (5/6) / 3 = 5/18
    assert m["mrr@10"] == pytest.approx(5 / 18)


def test_retrieval_metrics_cutoff_and_empty() -> None:
    ranked = [[f"d{i}" for i in range(12)]]
    m = retrieval_metrics(ranked, [{"d11"}], ks=(10,))
    assert m["recall@10"] == 0.0 and m["mrr@10"] == 0.0  # gold at rank 12 is beyond both cut-offs
    assert retrieval_metrics([], [])["recall@1"] == 0.0
    with pytest.raises(ValueError):
        retrieval_metrics([["a"]], [])


def test_macro_f1_names_the_classes_it_averages() -> None:
    """A label neither in gold nor predicted counts in macro_f1 only; macro_f1_present skips it."""
    gold = [S, S, R, R]
    pred = [S, R, R, None]
    m = label_metrics(gold, pred, [S, R, N])
    # SUPPORTS: P=1, R=1/2, F1=2/3; REFUTES: P=1/2, R=1/2, F1=1/2; NEI: never seen, F1=0
    assert m["macro_f1"] == pytest.approx((2 / 3 + 1 / 2) / 3)
    assert m["macro_f1_labels"] == [S, R]
    assert m["macro_f1_present"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    predicted_only = label_metrics([S, S], [S, N], [S, R, N])  # NEI predicted, never gold
    assert predicted_only["macro_f1_labels"] == [S, N]
