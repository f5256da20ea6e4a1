"""A vote counts only what was said: an item most of whose samples brought no reply has failed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from factdebate.bench.judging.metrics import failed_item
from factdebate.bench.judging.report import run_summary
from factdebate.graphs.registry import load_method
from factdebate.nodes.self_consistency.vote import MAX_FAILED_SHARE, mostly_failed

CLAIM = "The Eiffel Tower is located in Paris."


def replies(answers: list[str | None]) -> Callable[[str], str]:
    """The n-th call gets ``answers[n]``; None: the call times out (no reply)."""
    queue = iter(answers)

    def reply(prompt: str) -> str:
        answer = next(queue)
        if answer is None:
            raise TimeoutError("no answer in time")
        return f"Reasoning.\n**{answer}**"

    return reply


async def vote(scripted: Any, answers: list[str | None]) -> dict[str, Any]:
    name, _ = scripted([("step by step", replies(answers))])
    graph, cls = load_method("self-consistency-cot")
    settings = cls(model=name, k=len(answers), model_retries=0)
    out: dict[str, Any] = await graph.ainvoke({"claim": CLAIM}, context=settings)
    return out


async def test_an_item_most_of_whose_samples_failed_is_a_failed_item(scripted) -> None:
    # 3 of 5 time out; the two that answered agree, yet they are not a majority of 5
    out = await vote(scripted, [None, "SUPPORTS", None, None, "SUPPORTS"])
    assert (out["verdict"], out["stop_reason"]) == (None, "samples_failed")
    detail = out["decided_by"]["detail"]
    assert "SUPPORTS x2" in detail and "no reply x3" in detail and "the item failed" in detail
    assert out["cost"]["total"]["llm_calls"] == 5  # the failed calls were spent all the same
    row = {"id": 1, "gold": "SUPPORTS", "prediction": None, **out}
    assert failed_item(row)
    summary = run_summary([row])
    assert summary["failed"] == 1 and summary["failed_calls"] == 3


@pytest.mark.parametrize(
    ("answers", "verdict"),
    [
        (["REFUTES", None, "REFUTES", None, "SUPPORTS"], "REFUTES"),  # 2 of 5 failed: voted
        ([None, "SUPPORTS", None, "SUPPORTS"], "SUPPORTS"),  # exactly half: still voted
    ],
)
async def test_a_minority_of_failed_samples_still_votes(scripted, answers, verdict) -> None:
    out = await vote(scripted, answers)
    assert out["verdict"] == verdict and out["stop_reason"] == "vote"
    assert f"no reply x{answers.count(None)}" in out["decided_by"]["detail"]


def test_the_threshold_is_more_than_half() -> None:
    assert MAX_FAILED_SHARE == 0.5
    assert [mostly_failed(f, 13) for f in (6, 7, 11)] == [False, True, True]
    assert not mostly_failed(1, 2) and mostly_failed(2, 2) and not mostly_failed(0, 0)
