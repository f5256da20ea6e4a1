"""The 12 recorded Tool-MAD debates of 2026-11-27 replayed: the gate profiles on real answers.

The capable model's answers are served turn by turn (tests/nodes/tool_mad/debates.py); RAGAS
scores come from its recorded verdicts and questions, embedded by the shipped MiniLM.
"""

from __future__ import annotations

from typing import Any

import pytest

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.tools import dispatch
from tests.fake_provider import fake_provider
from tests.nodes.tool_mad.debates import Claim, DebateReplay, claims

# The REFUTES claims both debaters agreed on in every round, stopped by relevance alone.
REFUTED_LATE = {"0.67", "0.69", "0.76"}


async def replay(claim: Claim, **settings: Any) -> tuple[dict[str, Any], DebateReplay]:
    served = DebateReplay()
    served.install_tools()
    try:
        with fake_provider(served) as provider:
            context = ToolMADContext(model=provider.model(), **settings)
            out: dict[str, Any] = await graph.ainvoke({"claim": claim.claim}, context=context)
    finally:
        dispatch.override_tool("rag", None)
        dispatch.override_tool("search", None)
    return out, served


@pytest.fixture(scope="module")
def refuted_late() -> list[Claim]:
    found = [c for c in claims() if c.gold == "REFUTES" and c.stop_reason == "round_limit"]
    assert len(found) == 3
    return found


async def test_paper_profile_reproduces_the_recorded_runs(refuted_late: list[Claim]) -> None:
    for claim in refuted_late:
        out, served = await replay(claim, gate_profile="paper")
        assert not served.missed
        assert (out["stop_reason"], out["rounds"], out["verdict"]) == ("round_limit", 3, "REFUTES")
        assert out["cost"]["total"]["llm_calls"] == 43
    relevance = set()
    for claim in refuted_late:
        out, _ = await replay(claim, gate_profile="paper", max_rounds=1)
        assert all(t["faithfulness"] == 1.0 for t in out["transcript"])
        relevance |= {f"{t['answer_relevance']:.2f}" for t in out["transcript"]}
    assert relevance == REFUTED_LATE  # the scores the recording reports, under MiniLM


async def test_default_profile_settles_the_same_refutations_in_round_one(
    refuted_late: list[Claim],
) -> None:
    for claim in refuted_late:
        out, served = await replay(claim)
        assert not served.missed
        assert (out["stop_reason"], out["rounds"], out["verdict"]) == ("consensus", 1, "REFUTES")
        assert out["cost"]["total"]["llm_calls"] == 14
        assert "gate profile minilm" in out["decided_by"]["detail"]
