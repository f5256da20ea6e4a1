"""The debate page says what each score is: a round's own, or the judge's means over rounds."""

from __future__ import annotations

from factdebate.pages.debate import render_debate_page


def turn(round_no: int, agent: str, faithfulness: float) -> dict[str, object]:
    return {"round": round_no, "agent": agent, "answer": "x\n**SUPPORTS**", "label": "SUPPORTS",
            "faithfulness": faithfulness, "answer_relevance": 0.5}  # fmt: skip


def page(reason: str, agent: str, last: int) -> str:
    transcript = [turn(r, a, 0.1 * r) for r in range(1, last + 1) for a in ("debater_a", "b")]
    result = {
        "verdict": "SUPPORTS",
        "stop_reason": reason,
        "rounds": last,
        "transcript": transcript,
        "decided_by": {"agent": agent, "round": last, "reason": reason, "detail": "why",
                       "scores": {"debater_a": {"faithfulness": 0.2, "answer_relevance": 0.5}}},
    }  # fmt: skip
    return render_debate_page(result, "c", "tool-mad", {"faithfulness_threshold": 0.7})


def test_the_judges_scores_are_labelled_as_means_over_the_rounds() -> None:
    html = page("round_limit", "judge", 3)
    assert '<div class="muted" id="verdict-scores"><b>mean over rounds 1-3</b>: ' in html
    assert html.count("scores: this round's own") == 3  # each round's cards: its own scores


def test_a_consensus_shows_the_scores_of_its_round() -> None:
    html = page("consensus", "debaters", 2)
    assert "<b>round 2&#39;s scores</b>" in html or "<b>round 2's scores</b>" in html
    assert "mean over rounds" not in html
