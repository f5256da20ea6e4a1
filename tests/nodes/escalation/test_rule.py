"""The screen's rule: the top readable label's share of all answers against screen_share."""

from __future__ import annotations

import pytest

from factdebate.nodes.escalation.rule import screen_reason, top_label


@pytest.mark.parametrize(
    ("labels", "top", "share"),
    [
        (["SUPPORTS", "SUPPORTS"], "SUPPORTS", 1.0),
        (["SUPPORTS", "REFUTES"], "SUPPORTS", 0.5),  # a tie: the earliest answer's label
        (["REFUTES", "SUPPORTS", "SUPPORTS"], "SUPPORTS", 2 / 3),
        (["SUPPORTS", None, "SUPPORTS"], "SUPPORTS", 2 / 3),  # unreadable counts against
        ([None, None], None, 0.0),
    ],
)
def test_top_label_and_its_share(labels, top, share):
    assert top_label(labels) == (top, pytest.approx(share))


def test_the_reason_follows_the_share_and_screen_all():
    assert screen_reason(["SUPPORTS"] * 3, 1.0, False) == "agreed"
    assert screen_reason(["SUPPORTS", "SUPPORTS", "REFUTES"], 1.0, False) == "disagreed"
    assert screen_reason(["SUPPORTS", "SUPPORTS", "REFUTES"], 0.6, False) == "agreed"
    assert screen_reason(["SUPPORTS", "SUPPORTS", "REFUTES"], 2 / 3, False) == "agreed"
    assert screen_reason([None, None], 0.5, False) == "unreadable"
    assert screen_reason(["SUPPORTS"] * 2, 1.0, True) == "screen_all"
    assert screen_reason(["SUPPORTS", "REFUTES"], 1.0, True) == "disagreed"
