"""Weighted factuality: pyramid weights and weighted scores on hand-worked examples."""

from __future__ import annotations

import pytest

from factdebate.tools.scoring.factuality import (
    ClaimMatcher,
    factuality_scores,
    merge_claims,
    precision,
    pyramid_layer,
    pyramid_weight,
    weighted_scores,
)

A, B, C, D = (
    "Paris is the capital of France.",
    "Paris has about two million inhabitants.",
    "The Seine flows through Paris.",
    "The Louvre is in Paris.",
)
E = "Paris hosted the 2024 Summer Olympics."
# G = 3 references: A in all three, B in two, C and D in one each.
REFERENCES = [[A, B, C], ["paris is the capital of FRANCE", B], [A.upper(), D]]


def test_pyramid_layers_and_weights_for_three_references():
    assert [pyramid_layer(f, 3) for f in (3, 2, 1, 0)] == [1, 2, 3, 4]
    assert [pyramid_weight(f, 3) for f in (3, 2, 1, 0)] == [4, 3, 2, 1]
    with pytest.raises(ValueError):
        pyramid_layer(4, 3)


def test_merging_by_normalised_text_counts_references_not_mentions():
    golden = merge_claims(REFERENCES + [[D, D]], ClaimMatcher())
    by_text = {g.text: g for g in golden}
    assert [g.text for g in golden] == [A, B, C, D]
    assert by_text[A].frequency == 3 and by_text[A].layer == 2 and by_text[A].weight == 4
    assert by_text[D].frequency == 2  # twice in the 4th reference counts once
    assert len(by_text[A].members) == 3


def test_embedding_matcher_merges_paraphrases_over_threshold():
    vectors = {"x one": [1.0, 0.0], "x two": [0.9, 0.1], "y": [0.0, 1.0]}
    matcher = ClaimMatcher(lambda texts: [vectors[t] for t in texts], threshold=0.9)
    golden = merge_claims([["x one"], ["x two", "y"]], matcher)
    assert [(g.text, g.frequency) for g in golden] == [("x one", 2), ("y", 1)]
    strict = ClaimMatcher(lambda texts: [vectors[t] for t in texts], threshold=0.999)
    assert len(merge_claims([["x one"], ["x two"]], strict)) == 2


def test_hand_worked_weighted_scores():
    # Answer: A true (w 4), B true (w 3), C false (w 2), E true (no match, w 1).
    scores, golden = factuality_scores(
        [A, B, C, E], [True, True, False, True], REFERENCES, ClaimMatcher(), gamma=0.8
    )
    assert scores["weights"] == [4, 3, 2, 1]
    assert scores["golden_mass"] == 11  # 4 + 3 + 2 + 2
    assert scores["precision"] == pytest.approx(3 / 4)
    assert scores["weighted_precision"] == pytest.approx(8 / 10)
    assert scores["recall_at_gamma"] == pytest.approx(8 / (0.8 * 11))
    p, r = 0.8, 8 / 8.8
    assert scores["f1_at_gamma"] == pytest.approx(2 * p * r / (p + r))
    assert len(golden) == 4


def test_gamma_caps_recall_at_one():
    out = weighted_scores([True] * 4, [4, 3, 2, 2], golden_mass=11, gamma=0.8)
    assert 11 / (0.8 * 11) > 1
    assert out["recall_at_gamma"] == 1.0
    assert out["f1_at_gamma"] == pytest.approx(1.0)
    assert weighted_scores([True] * 4, [4, 3, 2, 2], 11, gamma=1.0)["recall_at_gamma"] == 1.0


def test_f1_is_zero_when_nothing_is_supported():
    out = weighted_scores([False, False, None], [4, 3, 2], golden_mass=11)
    assert out["weighted_precision"] == 0.0
    assert out["recall_at_gamma"] == 0.0
    assert out["f1_at_gamma"] == 0.0
    assert weighted_scores([], [], golden_mass=11)["f1_at_gamma"] == 0.0


def test_unjudged_claims_are_left_out_of_precision():
    assert precision([True, None, False]) == 0.5
    assert precision([None]) is None
    out = weighted_scores([True, None], [3, 4], golden_mass=3, gamma=1.0)
    assert out["weighted_precision"] == 1.0


def test_without_references_only_plain_precision():
    scores, golden = factuality_scores([A, B], [True, False])
    assert scores["precision"] == 0.5 and golden == []
    assert "weighted_precision" not in scores


def test_bad_gamma_is_rejected():
    with pytest.raises(ValueError):
        weighted_scores([True], [1], 1, gamma=0.0)


def test_embedding_matcher_never_merges_claims_with_different_numbers():
    same = ClaimMatcher(lambda texts: [[1.0, 0.0] for _ in texts], threshold=0.9)
    assert same.similarity("Built in 1889.", "Built in 1887.") == 0.0
    assert same.similarity("Built in 1,889 days.", "Built in 1889 days!") == 1.0
    assert same.similarity("It is tall.", "It is high.") == pytest.approx(1.0)


@pytest.mark.slow
def test_minilm_matcher_merges_paraphrases_not_other_facts():
    from factdebate.nodes.mad_fact.score_answer import default_embed

    matcher = ClaimMatcher(default_embed, threshold=0.9)
    assert matcher.best_match("The capital of France is Paris.", [A, C]) == 0
    assert matcher.best_match("Berlin is the capital of Germany.", [A, C]) is None
    assert (
        matcher.best_match("The tower was finished in 1887.", ["The tower was finished in 1889."])
        is None
    )
