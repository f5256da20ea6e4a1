"""MADAM-RAG paper fidelity: strict EM on real RAMDocs items, round input, aggregator, waves."""

from __future__ import annotations

import pytest

from factdebate.datasets import DatasetError, QAItem, load_ramdocs
from tools.answers import answer_includes, answer_scores

# --------------------------------------------------------------------------- strict EM


@pytest.fixture(scope="module")
def ramdocs() -> dict[str, QAItem]:
    try:
        loaded = load_ramdocs()
    except DatasetError as exc:
        pytest.skip(f"RAMDocs not available: {exc}")
    return {item.id: item for item in loaded.items}


def em(item: QAItem, predicted: list[str]) -> float:
    return answer_scores(predicted, item.gold_answers, item.wrong_answers)["exact_match"]


def test_a_longer_date_includes_the_gold_year(ramdocs: dict[str, QAItem]) -> None:
    marina = ramdocs["351"]  # gold 1963 / 1964 to 1982 / 2006, wrong 1985 / 1955
    assert marina.gold_answers == ["1963", "1964 to 1982", "2006"]
    assert em(marina, ["February 17, 1963", "1964 to 1982", "2006"]) == 1.0
    assert em(marina, ["February 17, 1963", "from 1964 to 1982", "in 2006"]) == 1.0
    assert em(marina, ["February 17, 1963", "1964 to 1982", "2006", "1955"]) == 0.0
    assert em(marina, ["1963", "1964", "2006"]) == 0.0  # "1964" does not include the range


def test_a_number_with_another_unit_noun_includes_the_gold(ramdocs: dict[str, QAItem]) -> None:
    broken_bow = ramdocs["0"]  # gold "3,559 people", wrong "10,000 people"
    assert broken_bow.gold_answers == ["3,559 people"]
    assert em(broken_bow, ["approximately 3,559 residents"]) == 1.0
    assert em(broken_bow, ["approximately 3,559 residents", "about 10,000 inhabitants"]) == 0.0
    assert em(broken_bow, ["3,560 residents"]) == 0.0


def test_a_bare_year_does_not_include_a_full_date(ramdocs: dict[str, QAItem]) -> None:
    dunville = ramdocs["200"]  # gold "1900" and "June 11, 1963"
    assert em(dunville, ["1900", "11 June 1963"]) == 1.0
    assert em(dunville, ["1900", "1963"]) == 0.0
    assert em(dunville, ["1900", "July 11, 1963"]) == 0.0


@pytest.mark.parametrize(
    ("output", "gold", "included"),
    [
        ("February 17, 1963", "1963", True),
        ("approximately 3,559 residents", "3,559 people", True),
        ("1963", "June 11, 1963", False),
        ("2 billion people", "2 million people", False),
        ("Mahesh Bhatt", "Bhatt", True),
        ("New Orleans, Louisiana", "Cloutierville, Louisiana", False),
    ],
)
def test_answer_includes(output: str, gold: str, included: bool) -> None:
    assert answer_includes(output, gold) is included
