"""The debate page: content per method, escaping, review and replay, CLI/API hooks, Chromium."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from typer.testing import CliRunner

import tests.nodes.debate_cv.test_graph as dcv
import tests.nodes.mad_fact.test_graph as mf
import tests.nodes.madam_rag.test_graph as madam
import tests.nodes.tool_mad.test_graph as tm
from factdebate.api import averify
from factdebate.bench.running.long_form import ascore_answer
from factdebate.cli import app
from factdebate.pages.debate import prose, reasoning, render_debate_page, stop_reason_words
from factdebate.tools import dispatch
from tests.chromium import keep_screenshot, opener, visible
from tests.conftest import doc
from tests.nodes.baselines.test_graph import CLAIM

HOSTILE = "<script>alert('pwned')</script>"
HOSTILE_TITLE = '<img src=x onerror="alert(1)">'
runner = CliRunner()


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    """Open a local page in headless Chromium: its DOM after loading, and a screenshot."""
    return opener(tmp_path)


# ------------------------------------------------------------------ debate pages


@pytest.fixture
def hostile_tools() -> Any:
    """Retrieval returning a document whose title and text try to inject markup."""
    evidence = [doc("rag-1", f"The tower is in Paris. {HOSTILE}", HOSTILE_TITLE)]
    dispatch.override_tool("rag", lambda q, k: evidence[:k])
    dispatch.override_tool("search", lambda q, k: [doc("web-1", "Paris has it.", "Paris")][:k])
    yield
    dispatch.override_tool("rag", None)
    dispatch.override_tool("search", None)


def test_demo_page_in_chromium(tmp_path: Path, scripted, hostile_tools, browser, data_home):
    """What `make demo` does (verify CLAIM --html PAGE), on a scripted model, in a browser."""
    name, _ = scripted(tm.debate_rules(label_b="REFUTES"))
    page = tmp_path / "runs" / "demo" / "debate.html"
    claim = f"The Eiffel Tower is in Paris. {HOSTILE}"
    settings = ["--rounds", "2", "--set", "relevance_strictness=1", "--model", name]
    shown = runner.invoke(app, ["verify", claim, *settings, "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.strip().splitlines()
    assert lines[-1] == f"debate page: {page.resolve()}"  # the demo ends with the page's path
    assert "SUPPORTS — stop reason: round_limit, rounds: 2" in shown.output
    dom = browser(page, tmp_path / "tool-mad.png")
    text, tags = visible(dom)
    assert "script" not in tags and "img" not in tags  # hostile markup stayed text
    assert HOSTILE in text and HOSTILE_TITLE in text
    assert re.search(r"SUPPORTS\s+Stopped because the round limit was reached", text)
    assert "Round 1" in text and "Round 2" in text and "Round 3" not in text
    assert text.count("debater_a (rag)") == 2 and text.count("debater_b (search)") == 2
    assert "query Eiffel Tower location" in text and "[rag-1]" in text and "[web-1]" in text
    assert "faithfulness 1.00 (threshold 0.70: passes" in text
    # The default gate profile is MiniLM's (relevance 0.63), shown as the run used it.
    assert re.search(r"answer relevance 0\.\d\d \(threshold 0\.63: (passes|below)", text)
    assert re.search(r"judge 1 \d+ \d+", text) and re.search(r"scorer \d+ \d+ \d+", text)
    assert "Recorded errors (0)" in text
    # What a fact-checker audits: the evidence's words, the deciding reasoning, the settings.
    assert "The tower is in Paris." in text  # the document's text, not only its title
    assert re.search(r"Decided by judge after round 2: No consensus after 2 round", text)
    assert "Reasoning of the judge The evidence places it in Paris." in text
    assert re.search(r"run time \d+\.\d s", text) and "relevance_strictness 1" in text
    assert "**" not in text  # labels are badges, never raw markdown
    assert re.search(r'<span class="label REFUTES">REFUTES</span>', dom)


def test_page_of_a_judged_debate_in_chromium(
    tmp_path: Path, scripted, fake_tools, browser, data_home
):
    """The page the docs show (docs/img/debate-page.png): the debaters disagree for two rounds,
    one answer's faithfulness cannot be scored, the judge decides."""
    unscorable = (
        lambda p: "StatementGeneratorOutput" in p and "search result" in p,
        "no statements, just prose",
    )
    judge = (
        "Both documents place the tower in Paris; debater_b's search result supports it too, "
        "its REFUTES is not backed by any document.\n**SUPPORTS**"
    )
    name, _ = scripted([unscorable, *tm.debate_rules(label_b="REFUTES", judge=judge)])
    page = tmp_path / "debate.html"
    settings = ["--rounds", "2", "--set", "relevance_strictness=1", "--model", name]
    shown = runner.invoke(app, ["verify", tm.CLAIM, *settings, "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    png = tmp_path / "debate.png"
    dom = browser(page, png, size="1280,2400")
    keep_screenshot(png, "debate-page.png")
    text, _ = visible(dom)
    assert "The Eiffel Tower stands in Paris, France." in text  # evidence text
    assert "Reasoning of the judge Both documents place the tower in Paris;" in text
    unscored = "faithfulness not computed (threshold 0.70): score_error: ScorerOutputError:"
    assert text.count(unscored) == 2  # the score's own error, not its inner parse step
    assert "**" not in text and "Decided by judge after round 2" in text


async def test_unscored_turn_shows_not_computed_and_errors_are_listed(tmp_path: Path, scripted):
    result = {
        "verdict": None,
        "stop_reason": "round_limit",
        "rounds": 1,
        "transcript": [
            {
                "round": 1,
                "agent": "debater_a",
                "tool": "rag",
                "query": "q",
                "evidence": [],
                "answer": "junk",
                "label": None,
                "faithfulness": None,
                "answer_relevance": 0.5,
            }
        ],
        "cost": {},
        "errors": [
            {"round": 1, "agent": "judge", "stage": "judge", "kind": "parse_error", "raw": "??!"}
        ],
    }
    html = render_debate_page(
        result, "c", "tool-mad", {"faithfulness_threshold": 0.7, "relevance_threshold": 0.8}
    )
    text, _ = visible(html)
    assert "No verdict" in text and "no readable label" in text
    assert "faithfulness not computed (threshold 0.70)" in text
    assert "answer relevance 0.50 (threshold 0.80: below" in text
    assert "Recorded errors (1)" in text and "parse_error" in text and "??!" in text
    assert "no reason was recorded" in text  # said, not left blank


def _scored_turn(**scores: Any) -> dict[str, Any]:
    return {
        "round": 1,
        "agent": "debater_a",
        "tool": "rag",
        "query": "q",
        "evidence": [doc("d1", "x" * 5000, "Long document")],
        "answer": "It is in Paris, so **Supported**.\n**SUPPORTS**",
        "label": "SUPPORTS",
        **scores,
    }


def test_score_reason_sits_next_to_the_score_and_numbers_stay_in_range():
    result = {
        "verdict": "SUPPORTS",
        "justification": "Both sources agree it is in **Paris**.\nScores: **NOT ENOUGH INFO**",
        "stop_reason": "round_limit",
        "rounds": 1,
        "transcript": [_scored_turn(faithfulness=None, answer_relevance=-0.04)],
        "errors": [
            {
                "round": 1,
                "agent": "debater_a",
                "stage": "score",
                "kind": "score_error",
                "message": "faithfulness: TimeoutError: the scorer took too long",
            },
            {"round": 1, "agent": "judge", "kind": "truncated", "raw": "r" * 5000},
        ],
    }
    thresholds = {"faithfulness_threshold": 0.7, "relevance_threshold": 0.8}
    html = render_debate_page(result, "c", "tool-mad", thresholds, elapsed_s=12.34)
    text, _ = visible(html)
    assert (
        "faithfulness not computed (threshold 0.70): score_error: TimeoutError: the scorer "
        "took too long" in text
    )
    assert "answer relevance 0.00 (raw -0.04) (threshold 0.80: below)" in text
    assert "-0.04" not in text.replace("(raw -0.04)", "")  # only ever shown as the raw value
    assert "RAGAS answer relevancy is the mean cosine similarity" in text
    assert "Reasoning Both sources agree it is in Paris." in text
    assert "NOT ENOUGH INFO" not in text  # the echoed label line is not the reasoning
    assert "**" not in text and "<strong>Paris</strong>" in html
    assert "It is in Paris, so SUPPORTS." in text  # a label spelling in bold is a badge
    assert "run time 12.3 s" in text and "relevance_threshold 0.8" in text
    assert "x" * 3000 in text and "x" * 3001 not in text
    assert "2000 more characters not shown" in text
    assert "r" * 4000 not in text and "1000 more characters not shown" in text  # raw output


def test_score_absent_because_scoring_is_off_or_no_tool():
    off = _scored_turn(faithfulness=None, answer_relevance=None)
    text, _ = visible(
        render_debate_page({"transcript": [off]}, "c", "m", {"stability_score": False})
    )
    assert text.count("not computed: scoring is off (stability_score=false)") == 2
    bare = {**_scored_turn(faithfulness=None, answer_relevance=0.9), "tool": "none"}
    text, _ = visible(render_debate_page({"transcript": [bare]}, "c", "m", {}))
    assert "faithfulness not computed: not applicable: this debater has no retrieval tool" in text
    assert "answer relevance 0.90" in text and "(raw" not in text


def test_prose_and_reasoning_helpers():
    assert str(prose("**Refuted** and **bold** <b>")) == (
        '<span class="label REFUTES">REFUTES</span> and <strong>bold</strong> &lt;b&gt;'
    )
    assert str(prose(f"**{HOSTILE}**")) == f"<strong>{escape(HOSTILE)}</strong>"
    assert reasoning("Verdict: **SUPPORTS**") == ""
    assert reasoning("**REFUTES**\nBecause the dates differ.\nFinal answer - Refuted") == (
        "Because the dates differ."
    )
    assert reasoning("The claim is not supported by the text.") == (
        "The claim is not supported by the text."
    )
    assert reasoning(None) == ""
    assert reasoning("The Scores:") == ""  # what was left of "The Scores: **SUPPORTS**"
    assert reasoning("Because:\n- the dates differ") == "Because:\n- the dates differ"


def test_provenance_shown_when_given_and_stop_reason_alone_when_not():
    decided = {
        "agent": "moderator",
        "round": 2,
        "reason": "moderator",
        "detail": "The moderator found no new insight.",
    }
    text, _ = visible(
        render_debate_page({"verdict": "REFUTES", "decided_by": decided, "rounds": 2}, "c", "m")
    )
    assert "Decided by moderator after round 2: The moderator found no new insight." in text
    assert "Reasoning of the moderator The deciding step gave no reasoning" in text
    text, _ = visible(
        render_debate_page({"verdict": "REFUTES", "stop_reason": "consensus"}, "c", "m")
    )
    assert "Decided by" not in text and "Stopped because the debaters agreed" in text
    assert "Settings Not recorded." in text


def test_stop_reasons_in_words():
    assert stop_reason_words("consensus").startswith("the debaters agreed")
    assert stop_reason_words("something_new") == "something_new"
    assert stop_reason_words(None) == "the run did not report why it stopped"


async def test_madam_rag_page_shows_agents_per_document_and_aggregator(tmp_path: Path, scripted):
    name, _ = scripted(madam.jordan_rules(drop=("1998",)))
    docs = [madam.NBA, madam.PROF, madam.FAKE, madam.GARBLED]
    page = tmp_path / "madam.html"
    await averify(madam.QUESTION, "madam-rag", docs, model=name, html=page)
    text, _ = visible(page.read_text(encoding="utf-8"))
    assert "1956; 1963" in text and "no agent changed its answer" in text
    assert "document jordan-nba" in text and "document jordan-fake" in text
    assert text.count("aggregator: 1956 1963") == 2  # its list in each of the two rounds
    assert "Kept ['1956', '1963']; dropped ['1998']." in text
    assert "parse_error" in text and "I believe it is 1963, honestly." in text  # garbled agent
    assert "**" not in text and "Decided by aggregator" in text


async def test_debate_cv_page_shows_moderator_notes_per_round(tmp_path: Path, scripted):
    name, _ = scripted(dcv.rules(dcv.stop_at(2, "REFUTES")))
    page = tmp_path / "dcv.html"
    result = await averify(dcv.CLAIM, "debate-cv", dcv.EVIDENCE, model=name, html=page)
    assert result["verdict"] == "REFUTES"
    text, _ = visible(page.read_text(encoding="utf-8"))
    assert "moderator: go on" in text and "moderator: stop with REFUTES" in text
    assert text.count("new insight: insight") == 2 and "affirmative" in text
    assert "the moderator judged the debate settled" in text
    assert "**" not in text and "Decided by moderator after round 2" in text


async def test_mad_fact_page_shows_each_claim_with_its_jury(tmp_path: Path, scripted, fake_tools):
    name, _ = scripted(
        [
            mf.clerk_rule([mf.CLAIM, mf.CLAIM2, "You should visit in spring."]),
            mf.confidence(0.9),
            mf.opinion("FALSE", claim=mf.CLAIM2),
            mf.opinion("TRUE"),
        ]
    )
    result = await ascore_answer(mf.ANSWER, "Tell me.", model=name, merge_method="text")
    html = render_debate_page(result, mf.ANSWER, "mad-fact", {"model": name})
    text, _ = visible(html)
    assert f"Claim 1: {mf.CLAIM} jury verdict TRUE" in text
    assert f"Claim 2: {mf.CLAIM2} jury verdict FALSE" in text
    assert "general_public" in text and "critic" in text and "strategy conditional" in text
    assert "You should visit in spring." in text  # listed as not checked
    assert "precision" in text


# ------------------------------------------------------------------ CLI hooks


def test_cli_verify_html_and_bad_path(tmp_path: Path, scripted, data_home):
    name, _ = scripted(dcv.rules(dcv.stop_at(1, "SUPPORTS")))
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "e1", "title": "T", "text": "The tower is in Paris."}\n')
    page = tmp_path / "p" / "debate.html"
    args = ["verify", dcv.CLAIM, "--method", "debate-cv", "--documents", str(docs)]
    result = runner.invoke(app, [*args, "--model", name, "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert f"debate page: {page.resolve()}" in result.output.replace("\n", "")
    assert "SUPPORTS" in visible(page.read_text(encoding="utf-8"))[0]
    folder = runner.invoke(app, [*args, "--model", name, "--html", str(tmp_path)])
    assert folder.exit_code == 2 and "is a folder" in folder.output


def test_score_answer_html(tmp_path: Path, scripted, fake_tools, data_home):
    name, _ = scripted([mf.clerk_rule([mf.CLAIM]), mf.confidence(0.9), mf.opinion("TRUE")])
    answer = tmp_path / "answer.txt"
    answer.write_text(mf.ANSWER)
    page = tmp_path / "claims.html"
    args = ["score-answer", "--answer-file", str(answer), "--model", name, "--html", str(page)]
    shown = runner.invoke(app, [*args, "--set", "merge_method=text"])
    assert shown.exit_code == 0, shown.output
    assert f"debate page: {page.resolve()}" in shown.output.replace("\n", "")
    text, _ = visible(page.read_text(encoding="utf-8"))
    assert f"Claim 1: {mf.CLAIM} jury verdict TRUE" in text and "FACTUAL" in text
    assert re.search(r"mad-fact · model scripted-\S+ · run time \d+\.\d s", text)


def test_unwritable_page_is_a_clear_error_and_leaves_nothing(tmp_path: Path):
    from factdebate.pages.debate import write_page

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match=r"cannot write page|cannot be checked"):
        write_page(blocker / "page.html", "<p>x</p>")
    folder = tmp_path / "ro"
    folder.mkdir()
    written = write_page(folder / "page.html", "<p>x</p>")
    assert written.read_text() == "<p>x</p>" and [p.name for p in folder.iterdir()] == ["page.html"]
    assert oct(written.stat().st_mode & 0o777) != oct(0o600)  # readable by others, not private


# ------------------------------------------------------------------ review and replay


def test_debate_page_shows_the_review_and_the_replay_parent(tmp_path: Path) -> None:
    from factdebate.pages.debate import render_debate_page

    result = {
        "verdict": "REFUTES",
        "justification": "Round two settled it.\n**SUPPORTS**",
        "stop_reason": "moderator",
        "rounds": 2,
        "transcript": [],
        "cost": {},
        "errors": [],
        "review": {"status": "overruled", "proposed": "SUPPORTS", "note": "<b>x</b>", "at": "t"},
        "replay": {"parent_thread": "orig", "from": "judge@2", "parent_step": 7, "settings": {}},
    }
    page = render_debate_page(result, CLAIM, "mad", {})
    assert 'id="review"' in page and "overruled" in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert 'id="replay"' in page and "orig" in page and "judge@2" in page and "step 7" in page


def test_page_shows_the_gate_profiles_thresholds_when_none_is_set() -> None:
    from factdebate.pages.debate import gate_in_force

    run = {
        "gate_profile": "auto",
        "relevance_encoder": "all-MiniLM-L6-v2",
        "faithfulness_threshold": -1.0,
        "relevance_threshold": -1.0,
    }
    shown = gate_in_force(run)
    assert (shown["faithfulness_threshold"], shown["relevance_threshold"]) == (0.7, 0.63)
    paper = gate_in_force({**run, "gate_profile": "paper", "relevance_threshold": 0.75})
    assert (paper["faithfulness_threshold"], paper["relevance_threshold"]) == (0.7, 0.75)
    assert gate_in_force({"confidence_threshold": 0.5}) == {"confidence_threshold": 0.5}
