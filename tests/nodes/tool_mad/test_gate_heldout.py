"""Tool-MAD's gate judged on unseen claims, its scores printed truthfully, relevance by ``n``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from factdebate.bench.judging.calibration import Agreement, RunRecord, effect, held_out, propose
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.nodes.tool_mad.gate import below
from factdebate.nodes.tool_mad.judge import score_problems
from factdebate.prompts import tool_mad as prompts
from factdebate.tools.models.llm import CallSite
from factdebate.tools.models.providers import resolve_model
from factdebate.tools.scoring.ragas_metrics import ragas_scores
from tests.capable import fenced_json, recorded_debates
from tests.fake_provider import fake_provider


def claim(item: str, relevance: float, gold: str = "SUPPORTS") -> RunRecord:
    """A claim whose debaters agreed (rightly) in round 1 at ``relevance``, run to the judge."""
    agreement = Agreement(item, 1, gold, True, 1.0, relevance, "all-MiniLM-L6-v2")
    return RunRecord(item, gold, gold, "round_limit", 3, 43, 1, (agreement,))


def test_held_out_estimate_differs_from_in_sample_where_the_threshold_overfits() -> None:
    # One right agreement sits far below the rest: fitted on all claims (keep every right
    # one) the threshold drops to it and every claim stops in round 1; held out, that claim's
    # threshold comes from the others (0.8, the ceiling), so it runs to the judge.
    runs = [claim(f"c{i}", 0.9) for i in range(9)] + [claim("low", 0.5)]
    fitted = propose(runs, keep=1.0)["relevance"].threshold
    assert fitted == pytest.approx(0.5)
    in_sample = effect(runs, "fitted", 0.7, fitted)
    assert in_sample.calls == pytest.approx(14.0)  # (43 - 1 judge call) / 3 rounds, round 1
    out = held_out(runs, keep=1.0)
    assert out.calls["estimate"] == pytest.approx((9 * 14 + 43) / 10)
    assert out.relevance == (pytest.approx(0.5), pytest.approx(0.8))
    assert out.by_gold["SUPPORTS"][0] == 10
    assert out.accuracy["estimate"] == 1.0


def test_held_out_leaves_a_claims_repeats_out_together() -> None:
    # Two repeats of the low claim: held out, neither may fit the threshold for the other.
    runs = [claim(f"c{i}", 0.9) for i in range(4)] + [claim("low", 0.5), claim("low", 0.5)]
    out = held_out(runs, keep=1.0)
    assert out.claims == 5
    assert out.calls["estimate"] == pytest.approx((4 * 14 + 43) / 5)


@pytest.mark.parametrize(
    ("value", "threshold", "shown"),
    [(0.657, 0.66, ("0.657", "0.660")), (0.1, 0.7, ("0.10", "0.70")), (0.6599, 0.66, None)],
)
def test_a_score_below_its_threshold_is_printed_below_it(
    value: float, threshold: float, shown: tuple[str, str] | None
) -> None:
    printed = below(value, threshold)
    assert float(printed[0]) < float(printed[1])
    if shown is not None:
        assert printed == shown


def test_the_judges_reason_never_says_a_score_is_below_an_equal_number() -> None:
    ctx = ToolMADContext(relevance_threshold=0.66)
    turn: Any = {"agent": "debater_a", "tool": "rag", "faithfulness": 1.0}
    turn["answer_relevance"] = 0.657
    (problem,) = score_problems(turn, ctx)
    assert problem == "debater_a's answer relevance 0.657 is below 0.660"


def _questions(prompt: str, body: dict[str, Any]) -> str:
    return json.dumps({"question": "Where is the Eiffel Tower?", "noncommittal": 0})


@pytest.mark.parametrize(("honours_n", "requests"), [(True, 1), (False, 3)])
async def test_relevance_asks_once_where_the_provider_takes_n(
    honours_n: bool, requests: int
) -> None:
    with fake_provider(_questions, honours_n=honours_n) as provider:
        model = resolve_model(provider.model(), temperature=0.0, max_tokens=256)
        scores = await ragas_scores(
            claim="The Eiffel Tower is in Paris.",
            answer="It stands in Paris.\n**SUPPORTS**",
            contexts=None,
            model=model,
            embeddings=DeterministicFakeEmbedding(size=16),
            site=CallSite(role="scorer", agent="debater_a", stage="score", retries=0),
            strictness=3,
        )
        sent = list(provider.requests)
    assert scores.answer_relevance is not None and not scores.errors
    assert len(sent) == requests
    assert sent[0]["n"] == 3  # the first request always asks for every sample
    cost = scores.cost["scorer"]
    assert cost["llm_calls"] == requests
    assert cost.get("samples") == 3  # three questions, whichever way they came


SILENCE = re.compile(r"\b(?:does|do) not mention\b|\bnone of the documents mentions?\b", re.I)


def test_the_recorded_checker_judged_statements_of_silence_as_the_note_says() -> None:
    # Every statement of silence the capable model checked in the 24 recorded debates was
    # read as inferable when the named documents were silent: the rule SILENCE_NOTE states.
    verdicts = []
    for row in recorded_debates(("2026-11-27", "2026-11-28")):
        if row["kind"] != "ragas-faithfulness-verdicts":
            continue
        found = fenced_json(row["answer"])
        verdicts += [s["verdict"] for s in found["statements"] if SILENCE.search(s["statement"])]
    assert len(verdicts) > 100
    assert set(verdicts) == {1}
    assert "does not mention" in prompts.GROUNDED_STYLE
    assert "None of the documents mentions" in prompts.SILENCE_NOTE


def test_the_cost_table_says_where_one_call_brought_several_samples() -> None:
    from factdebate.bench.judging.report import _samples_lines, cost_summary

    one = {"llm_calls": 1, "input_tokens": 10, "output_tokens": 5}
    several = {**one, "samples": 3}
    rows = [{"cost": {"scorer": several, "debater": one, "total": {**one, "llm_calls": 2}}}]
    cost = cost_summary(rows)
    assert cost["per_role"]["scorer"]["samples"] == 3
    assert "samples" not in cost["per_role"]["debater"]  # one answer per call: nothing to say
    (line,) = _samples_lines(cost)
    assert line.startswith("scorer: 1 calls brought 3 answers")


def test_the_debate_page_never_shows_a_score_below_an_equal_threshold() -> None:
    from factdebate.pages.debate import score_view

    view = score_view("answer relevance", 0.657, 0.66)
    assert (view["shown"], view["bound_shown"], view["passes"]) == ("0.657", "0.660", False)
    assert score_view("answer relevance", 0.9, 0.66)["bound_shown"] == "0.66"
