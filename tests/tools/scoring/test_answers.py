"""RAMDocs answer normalisation and strict EM / answer P/R/F1, on hand-made and real items."""

from __future__ import annotations

import pytest

from factdebate.datasets import QAItem, load_ramdocs
from factdebate.tools.scoring.answers import (
    answer_scores,
    answers_match,
    clean_answers,
    mean_answer_scores,
    normalize_answer,
)
from tests.conftest import data_or_skip


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("The Beatles", "beatles"),
        ("  An   Apple!! ", "apple"),
        ("3,559 people", "3559 people"),
        ("117,088", "117088"),
        ("1,000.00", "1000"),
        ("2.50", "2.5"),
        ("7.0 km", "7 km"),
        ("3.14", "3.14"),
        ("Assamese-language", "assamese language"),
        ("1 December 1737.", "1 december 1737"),
        ("Seven", "7"),
        ("50%", "50 percent"),
        ("Zürich", "zurich"),
        ("“Freedom Suite”", "freedom suite"),
        ("U.S.", "u s"),
    ],
)
def test_normalize_answer(raw: str, norm: str) -> None:
    assert normalize_answer(raw) == norm


def test_decimal_point_is_not_dropped() -> None:
    assert normalize_answer("3.5") != normalize_answer("35")


@pytest.mark.parametrize(
    ("pred", "ref", "same"),
    [
        ("3559", "3,559 people", True),
        ("the beatles", "Beatles", True),
        ("Bhatt", "Mahesh Bhatt", True),
        ("1737", "1 December 1737", False),
        ("1963", "1956", False),
        ("", "1956", False),
        ("New Orleans, Louisiana", "Cloutierville, Louisiana", False),
    ],
)
def test_answers_match(pred: str, ref: str, same: bool) -> None:
    assert answers_match(pred, ref) is same
    assert answers_match(ref, pred) is same


def test_clean_answers_drops_unknown_empty_and_duplicates() -> None:
    assert clean_answers(["Unknown", "", "The Beatles", "beatles", " 1963 "]) == [
        "The Beatles",
        "1963",
    ]


def test_all_gold_and_no_wrong_is_an_exact_match() -> None:
    scores = answer_scores(["1963", "1956"], gold=["1963", "1956"], wrong=["1998"])
    assert scores == {"exact_match": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_missing_gold_answer_fails_exact_match_and_halves_recall() -> None:
    scores = answer_scores(["1963"], gold=["1963", "1956"], wrong=["1998"])
    assert scores["exact_match"] == 0.0
    assert scores["recall"] == 0.5
    assert scores["precision"] == 1.0
    assert scores["f1"] == pytest.approx(2 / 3)


def test_a_wrong_answer_fails_exact_match_even_with_all_gold() -> None:
    scores = answer_scores(["1963", "1956", "1998"], gold=["1963", "1956"], wrong=["1998"])
    assert scores["exact_match"] == 0.0
    assert scores["recall"] == 1.0
    assert scores["precision"] == pytest.approx(2 / 3)


def test_an_extra_answer_that_is_not_misinformation_costs_precision_only() -> None:
    scores = answer_scores(["1963", "2001"], gold=["1963"], wrong=["1998"])
    assert scores["exact_match"] == 1.0
    assert scores["precision"] == 0.5


def test_a_wrong_answer_that_equals_a_gold_one_is_not_held_against_the_output() -> None:
    assert answer_scores(["Football"], gold=["Football"], wrong=["football"])["exact_match"] == 1.0


def test_empty_or_unknown_prediction_scores_zero() -> None:
    for pred in ([], ["unknown"]):
        assert answer_scores(pred, gold=["1963"]) == {
            "exact_match": 0.0,
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
        }


def test_empty_gold_is_answered_only_by_no_answer() -> None:
    assert answer_scores(["unknown"], gold=[])["exact_match"] == 1.0
    assert answer_scores(["1963"], gold=[])["exact_match"] == 0.0


def test_mean_answer_scores() -> None:
    rows = [answer_scores(["a1"], ["a1"]), answer_scores([], ["a1"])]
    assert mean_answer_scores(rows) == {
        "exact_match": 0.5,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "n": 2.0,
    }
    assert mean_answer_scores([])["n"] == 0.0


# --------------------------------------------------------------------------- real RAMDocs


@pytest.fixture(scope="module")
def ramdocs() -> dict[str, QAItem]:
    loaded = data_or_skip(load_ramdocs, "RAMDocs")
    return {item.id: item for item in loaded.items}


def test_real_items_formats(ramdocs: dict[str, QAItem]) -> None:
    broken_bow = ramdocs["0"]  # gold "3,559 people", wrong "10,000 people"
    assert broken_bow.gold_answers == ["3,559 people"]
    assert (
        answer_scores(["3559"], broken_bow.gold_answers, broken_bow.wrong_answers)["exact_match"]
        == 1.0
    )
    assert (
        answer_scores(["3,559", "10000 people"], broken_bow.gold_answers, broken_bow.wrong_answers)[
            "exact_match"
        ]
        == 0.0
    )
    ardhangini = ramdocs["26"]  # "Assamese-language" vs "Finnish-language"
    assert (
        answer_scores(["Assamese language"], ardhangini.gold_answers, ardhangini.wrong_answers)[
            "exact_match"
        ]
        == 1.0
    )
    assert (
        answer_scores(["Finnish"], ardhangini.gold_answers, ardhangini.wrong_answers)["recall"]
        == 0.0
    )
    vii = ramdocs["12"]  # gold "Blitzen Trapper", wrong "The Beatles"
    assert (
        answer_scores(["Blitzen Trapper", "Beatles"], vii.gold_answers, vii.wrong_answers)[
            "exact_match"
        ]
        == 0.0
    )
    louis = ramdocs["21"]  # "1 December 1737" vs "1 January 1738"
    assert (
        answer_scores(["1 december 1737."], louis.gold_answers, louis.wrong_answers)["exact_match"]
        == 1.0
    )
    assert answer_scores(["1737"], louis.gold_answers, louis.wrong_answers)["recall"] == 0.0


def test_every_real_item_scores_its_gold_list_as_exact_and_gold_plus_wrong_as_not(
    ramdocs: dict[str, QAItem],
) -> None:
    misled = 0
    for item in ramdocs.values():
        assert (
            answer_scores(item.gold_answers, item.gold_answers, item.wrong_answers)["exact_match"]
            == 1.0
        ), item.id
        wrong_only = [
            w for w in item.wrong_answers if not any(answers_match(w, g) for g in item.gold_answers)
        ]
        if wrong_only:
            scores = answer_scores(
                item.gold_answers + wrong_only[:1], item.gold_answers, item.wrong_answers
            )
            assert scores["exact_match"] == 0.0, item.id
            assert scores["recall"] == 1.0
            misled += 1
    assert misled > 290  # 306 of 500 questions list wrong answers; a few equal a gold one


def test_answers_of_correct_documents_cover_the_gold_list(ramdocs: dict[str, QAItem]) -> None:
    """The per-document answers RAMDocs ships for its correct documents match the gold list."""
    for item in list(ramdocs.values())[:100]:
        correct = [
            a
            for a, t in zip(item.meta["doc_answers"], item.doc_types, strict=True)
            if t == "correct"
        ]
        if not correct:
            continue
        scores = answer_scores(correct, item.gold_answers, item.wrong_answers)
        assert scores["precision"] == 1.0, (item.id, correct, item.gold_answers)
