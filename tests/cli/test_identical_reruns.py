"""Comparing two runs field by field, times aside (the reruns: tests/cli/test_verify.py)."""

from __future__ import annotations

from tests.reruns import differences, without_times


def test_the_helpers_compare_field_by_field() -> None:
    first = {"cost": {"total": {"output_tokens": 5}}, "elapsed_s": 1.0, "t": [{"at": 1, "x": 1}]}
    again = {"cost": {"total": {"output_tokens": 6}}, "elapsed_s": 2.0, "t": [{"at": 2, "x": 1}]}
    assert differences(without_times(first), without_times(again)) == [
        ".cost.total.output_tokens: 5 != 6"
    ]
