"""Dataset records: dataset label names mapped to the verdict labels, deterministic samples."""

from __future__ import annotations

import pytest

from factdebate.datasets import (
    CONFLICTING,
    NOT_ENOUGH_INFO,
    REFUTES,
    SUPPORTS,
    DatasetError,
    normalize_label,
    sample,
)


@pytest.mark.parametrize(
    ("raw", "canon"),
    [
        ("SUPPORT", SUPPORTS),
        ("SUPPORTS", SUPPORTS),
        ("Supported", SUPPORTS),
        ("CONTRADICT", REFUTES),
        ("REFUTES", REFUTES),
        ("Refuted", REFUTES),
        ("NOT_ENOUGH_INFO", NOT_ENOUGH_INFO),
        ("NOT ENOUGH INFO", NOT_ENOUGH_INFO),
        ("Not Enough Evidence", NOT_ENOUGH_INFO),
        ("Conflicting Evidence/Cherry-picking", CONFLICTING),
        ("Conflicting Evidence/Cherrypicking", CONFLICTING),  # spelling used in AVeriTeC dev.json
        (CONFLICTING, CONFLICTING),
    ],
)
def test_normalize_label(raw: str, canon: str) -> None:
    assert normalize_label(raw) == canon


def test_unknown_label_raises_with_label() -> None:
    with pytest.raises(DatasetError, match="MOSTLY TRUE"):
        normalize_label("MOSTLY TRUE")


def test_sample_is_deterministic_and_ordered() -> None:
    items = list(range(100))
    first = sample(items, 10, seed=7)
    assert first == sample(items, 10, seed=7)
    assert first == sorted(first) and len(set(first)) == 10
    assert first != sample(items, 10, seed=8)
    assert sample(items, None, seed=7) == items
    assert sample(items, 1000, seed=7) == items
    assert sample(items, 0, seed=7) == []
    with pytest.raises(ValueError):
        sample(items, -1, seed=7)
