"""Tool-MAD: a scoring call that brings no reply fails the claim (or leaves the turn unscored)."""

from __future__ import annotations

from typing import Any

import pytest

from factdebate.bench.judging.metrics import failed_item
from tests.nodes.tool_mad.test_graph import JUDGE_MARK, debate_rules, run


@pytest.fixture
def models(scripted: Any) -> tuple[str, str, Any]:
    """Debaters who agree (their scores would pass), and a scorer whose every call fails."""
    debaters, model = scripted(debate_rules())
    scorer, _ = scripted([("", RuntimeError("provider down"))])
    return debaters, scorer, model


async def test_a_failed_scoring_call_fails_the_claim_instead_of_running_more_rounds(
    models: tuple[str, str, Any], fake_tools: Any
) -> None:
    debaters, scorer, model = models
    out = await run(debaters, scorer_model=scorer, model_retries=0)
    assert (out["verdict"], out["stop_reason"], out["rounds"]) == (None, "model_failure", 1)
    assert model.calls_with(JUDGE_MARK) == 0
    assert "scoring call" in out["decided_by"]["detail"]
    row = {"prediction": None, "stop_reason": out["stop_reason"], "errors": out["errors"]}
    assert failed_item(row)  # a bench counts it failed, and a rerun retries it


async def test_unscored_setting_decides_the_turn_without_its_scores(
    models: tuple[str, str, Any], fake_tools: Any
) -> None:
    debaters, scorer, model = models
    out = await run(debaters, scorer_model=scorer, model_retries=0, score_failure="unscored")
    assert (out["verdict"], out["stop_reason"], out["rounds"]) == ("SUPPORTS", "consensus", 1)
    assert "judged unscored" in out["decided_by"]["detail"]
    assert any(e.get("stage") == "score" for e in out["errors"])  # the fault stays recorded


def test_score_failure_is_a_bounded_setting() -> None:
    from factdebate.nodes.tool_mad.context import ToolMADContext
    from factdebate.tools.core.errors import SettingsError

    with pytest.raises(SettingsError, match="score_failure must be fail or unscored"):
        ToolMADContext.from_settings({"score_failure": "retry"})
