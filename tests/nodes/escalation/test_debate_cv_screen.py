"""Escalating DebateCV: k readings of the evidence screen the claim, one request with n."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from factdebate.graphs.escalate_debate_cv import EscalateDebateCVContext
from factdebate.graphs.escalate_debate_cv import graph as escalate
from factdebate.tools.core.errors import SettingsError
from tests.fake_provider import fake_provider
from tests.nodes.debate_cv.test_graph import AFF, CLAIM, EVIDENCE, MOD, rules, stop_at

SCREEN_MARK = "Check whether the claim below is true"


async def run(model: str, **settings: Any) -> dict[str, Any]:
    context = EscalateDebateCVContext(model=model, **settings)
    return await escalate.ainvoke({"claim": CLAIM, "evidence": EVIDENCE}, context=context)


def structured(label: str) -> Any:
    def respond(prompt: str, body: dict[str, Any]) -> str:
        if "response_format" in body:
            return json.dumps({"reasoning": "Document [1] places it in Paris.", "label": label})
        return f"Document [1] places it in Paris.\n**{label}**"

    return respond


async def test_a_unanimous_screen_stops_at_one_request_with_n():
    with fake_provider(structured("SUPPORTS"), honours_n=True) as provider:
        out = await run(provider.model(), screen_k=3)
    assert len(provider.requests) == 1 and provider.requests[0]["n"] == 3
    assert (
        SCREEN_MARK in provider.replies[0]["prompt"] and "Eiffel" in provider.replies[0]["prompt"]
    )
    assert out["verdict"] == "SUPPORTS" and out["stop_reason"] == "screen_agreed"
    assert out["screen"]["labels"] == ["SUPPORTS"] * 3 and not out["screen"]["escalated"]
    assert out["cost"]["total"]["llm_calls"] == 1 and out["rounds"] == 0
    assert [t["agent"] for t in out["transcript"]] == ["screen_1", "screen_2", "screen_3"]


async def test_a_provider_ignoring_n_is_asked_for_the_rest_one_by_one():
    with fake_provider(structured("SUPPORTS"), honours_n=False) as provider:
        out = await run(provider.model(), screen_k=3)
    assert len(provider.requests) == 3 and provider.requests[0]["n"] == 3
    assert "n" not in provider.requests[1] and "n" not in provider.requests[2]
    assert out["screen"]["labels"] == ["SUPPORTS"] * 3
    assert out["stop_reason"] == "screen_agreed"


async def test_a_split_screen_escalates_to_the_debate_over_the_same_evidence(scripted):
    labels = itertools.cycle(["SUPPORTS", "REFUTES"])
    screen_rule = (SCREEN_MARK, lambda prompt: f"Reasoned.\n**{next(labels)}**")
    name, model = scripted(rules(stop_at(1, "REFUTES"), extra=[screen_rule]))
    out = await run(name, screen_k=2)
    assert model.calls_with(SCREEN_MARK) == 2  # no n: one call per screen answer
    assert out["screen"]["escalated"] and out["screen"]["reason"] == "disagreed"
    assert out["screen"]["labels"] == ["SUPPORTS", "REFUTES"]
    assert out["stop_reason"] == "moderator" and out["verdict"] == "REFUTES"
    assert model.calls_with(AFF) == 1 and model.calls_with(MOD) == 1
    moderator_prompt = next(p for p in model.prompts if MOD in p)
    assert "The Eiffel Tower stands in Paris." in moderator_prompt
    assert out["evidence"] == EVIDENCE


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"screen_k": 0}, "screen_k must be within 1..64"),
        ({"screen_share": 1.5}, "screen_share must be within 0.5..1"),
        ({"screen_model": "nothing"}, "names no model"),
    ],
)
def test_bad_screen_settings_are_refused_in_one_line(settings, words):
    with pytest.raises(SettingsError, match=words) as raised:
        EscalateDebateCVContext(**settings)
    assert "\n" not in str(raised.value)
