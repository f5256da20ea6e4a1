"""Escalating MAD-Fact: the jury only for the claims the verifier's ratings disagree on."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from factdebate.graphs.escalate_mad_fact import EscalateMADFactContext
from factdebate.graphs.escalate_mad_fact import graph as escalate
from factdebate.graphs.mad_fact import MADFactContext
from factdebate.graphs.mad_fact import graph as mad_fact
from tests.nodes.mad_fact.test_graph import OPINION, RATE, clerk_rule, opinion

SURE = "Paris is the capital of France."
CONTESTED = "Paris has two million inhabitants."
REFS = ["Reference one.", "Reference two."]
ANSWER = "My answer about Paris."
QUERY_MARK = "Write the next search query"
SETTINGS: dict[str, Any] = {"merge_method": "text", "debate_rule": 2, "max_rounds": 1,
                            "n_evaluators": 1}  # fmt: skip


def rules() -> list[Any]:
    split = itertools.cycle(["TRUE", "FALSE"])
    steps = itertools.count()
    return [
        clerk_rule([SURE, CONTESTED], "<answer>\nReference one."),
        clerk_rule([SURE], "<answer>\nReference two."),
        clerk_rule([SURE, CONTESTED], f"<answer>\n{ANSWER}"),
        (QUERY_MARK, lambda p: f"[Paris fact {next(steps)}]"),
        (lambda p: RATE in p and CONTESTED in p, lambda p: f"Maybe.\n**{next(split)}**"),
        (RATE, "Sure.\n**TRUE**"),
        (lambda p: OPINION in p and CONTESTED in p.split("What the jurors")[0], "No.\n**FALSE**"),
        opinion("TRUE"),
    ]


async def test_the_jury_sits_only_for_the_contested_claim_and_the_score_is_mad_facts(
    scripted, fake_tools
):
    name, model = scripted(rules())
    given = {"question": "Tell me about Paris.", "answer": ANSWER, "references": REFS}
    out = await escalate.ainvoke(given, context=EscalateMADFactContext(model=name, **SETTINGS))
    juries = [p for p in model.prompts if OPINION in p]
    assert juries and all(CONTESTED in p.split("What the jurors")[0] for p in juries)
    by_claim = {c["claim"]: c for c in out["claims"]}
    assert by_claim[SURE]["stop_reason"] == "screen_agreed"
    assert by_claim[SURE]["verdict"] == "TRUE" and by_claim[SURE]["votes"] == {"TRUE": 3}
    assert by_claim[CONTESTED]["verdict"] == "FALSE"
    assert by_claim[CONTESTED]["stop_reason"] != "screen_agreed"
    ratings = [t for t in out["transcript"] if str(t["agent"]).startswith("screen_")]
    assert len(ratings) == 6  # screen_k = 3 ratings per claim

    plain_name, _ = scripted(rules())
    plain = await mad_fact.ainvoke(given, context=MADFactContext(model=plain_name, **SETTINGS))
    assert [c["verdict"] for c in plain["claims"]] == [c["verdict"] for c in out["claims"]]
    assert out["scores"] == plain["scores"]  # the same importance-weighted formula
    assert out["scores"]["weighted_precision"] == pytest.approx(
        plain["scores"]["weighted_precision"]
    )
    assert out["verdict"] == plain["verdict"] == "NOT FACTUAL"


def test_bad_screen_settings_are_one_line():
    from factdebate.tools.core.errors import SettingsError

    with pytest.raises(SettingsError, match="screen_k must be within 1..64"):
        EscalateMADFactContext(screen_k=0)
