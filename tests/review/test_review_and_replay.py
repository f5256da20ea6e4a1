"""Human review (pause, approve, overrule, resume after a restart) and replay from any step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from factdebate.api import averify
from factdebate.nodes.review import ReviewError, check_decision
from factdebate.review.replay import ahistory, areplay, parse_start
from factdebate.review.resume import aresume
from tests.bounded import MODEL_GUARD_S, run_bounded
from tests.conftest import REPO, doc
from tests.nodes.baselines.test_graph import CLAIM, mad_rules

JUDGE_STOP = "Affirmative is right.\n**SUPPORTS**"


def judge_continue(prompt: str) -> str:
    return "Refuted after all.\n**REFUTES**" if "last round" in prompt else "Unclear.\nCONTINUE"


async def test_review_pauses_then_approve_keeps_the_verdict(scripted, fake_tools, tmp_path):
    name, model = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    paused = await averify(CLAIM, "mad", model=name, review=True, thread="t1", checkpoint=db)
    assert paused["status"] == "awaiting_review" and paused["thread"] == "t1"
    proposed = paused["proposed"]
    assert proposed["verdict"] == "SUPPORTS"
    assert proposed["choices"] == ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    assert [t["agent"] for t in proposed["transcript"]] == ["affirmative", "negative"]
    calls = len(model.prompts)
    done = await aresume("t1", checkpoint=db, approve=True, note="read the sources", model=name)
    assert done["verdict"] == "SUPPORTS"
    assert done["review"]["status"] == "approved" and done["review"]["proposed"] == "SUPPORTS"
    assert done["decided_by"]["agent"] == "judge"  # an approval keeps the method's provenance
    assert done["review"]["note"] == "read the sources" and done["review"]["at"]
    assert len(model.prompts) == calls  # resuming re-runs no agent


async def test_overrule_records_the_reviewed_verdict(scripted, fake_tools, tmp_path):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await averify(CLAIM, "mad", model=name, review=True, thread="t1", checkpoint=db)
    done = await aresume("t1", checkpoint=db, verdict="not enough info", note="no source")
    assert done["verdict"] == "NOT ENOUGH INFO"
    assert done["decided_by"]["agent"] == "reviewer" and "no source" in done["decided_by"]["detail"]
    assert done["review"] == {
        "status": "overruled",
        "proposed": "SUPPORTS",
        "note": "no source",
        "at": done["review"]["at"],
        "by": "local",  # no server: the local user decided
    }
    # A finished thread is not awaiting review any more, and asking again changes nothing.
    with pytest.raises(ValueError, match="not awaiting review"):
        await aresume("t1", checkpoint=db, approve=True)


async def test_invalid_resumes_are_refused_and_change_nothing(scripted, fake_tools, tmp_path):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await averify(CLAIM, "mad", model=name, review=True, thread="t1", checkpoint=db)
    with pytest.raises(ReviewError, match="unknown verdict 'MAYBE'"):
        await aresume("t1", checkpoint=db, verdict="MAYBE")
    with pytest.raises(ValueError, match="unknown thread 'nope'"):
        await aresume("nope", checkpoint=db, approve=True)
    with pytest.raises(ReviewError, match="exactly one"):
        await aresume("t1", checkpoint=db)
    # Still waiting with the same proposal: the bad attempts wrote nothing.
    again = await averify(CLAIM, "mad", model=name, review=True, thread="t1", checkpoint=db)
    assert again["status"] == "awaiting_review" and again["proposed"]["verdict"] == "SUPPORTS"
    done = await aresume("t1", checkpoint=db, approve=True)
    assert done["verdict"] == "SUPPORTS"


async def test_review_needs_a_checkpointer(scripted, fake_tools):
    name, _ = scripted(mad_rules(JUDGE_STOP))
    with pytest.raises(ValueError, match="review needs --checkpoint and --thread"):
        await averify(CLAIM, "mad", model=name, review=True)


def test_check_decision_bounds():
    labels = ("SUPPORTS", "REFUTES")
    assert check_decision({"verdict": "refutes"}, labels)["verdict"] == "REFUTES"
    assert check_decision({"approve": True, "at": "x"}, labels) == {
        "approve": True,
        "verdict": None,
        "note": "",
        "at": "x",
    }
    with pytest.raises(ReviewError):
        check_decision({"approve": True, "verdict": "REFUTES"}, labels)
    with pytest.raises(ReviewError):
        check_decision({"verdict": "x", "note": "n" * 5000}, labels)
    assert check_decision({"verdict": " a ; b;"}, None)["verdict"] == "a; b"
    with pytest.raises(ReviewError):
        check_decision({"verdict": " ; "}, None)


async def test_madam_review_takes_answers(scripted, tmp_path):
    rules = [
        ("Aggregate", "All agents agree.\nAnswer: Paris\nExplanation: both documents."),
        ("", "Answer: Paris\nExplanation: the document says so."),
    ]
    name, _ = scripted(rules)
    db = f"sqlite:{tmp_path / 'c.db'}"
    docs = [doc("d1", "The tower is in Paris."), doc("d2", "Paris has the tower.")]
    paused = await averify(
        "Where is the tower?",
        "madam-rag",
        docs,
        model=name,
        review=True,
        thread="q1",
        checkpoint=db,
    )
    assert paused["status"] == "awaiting_review"
    assert paused["proposed"]["choices"] is None
    assert {d["id"] for d in paused["proposed"]["evidence"]} == {"d1", "d2"}
    done = await aresume("q1", checkpoint=db, verdict="Paris; Lyon", note="two towers")
    assert done["verdict"] == "Paris; Lyon" and done["answers"] == ["Paris", "Lyon"]
    assert done["review"]["status"] == "overruled"


# A child process pauses a MAD debate at review and exits; a second one approves it.
CHILD = r"""
import sys
from tests.fakes import ScriptedChatModel
from tests.nodes.baselines.test_graph import mad_rules
from factdebate.tools.models.providers import register_model
register_model("review-fake", ScriptedChatModel(rules=mad_rules("Right.\n**SUPPORTS**")))
cot = ScriptedChatModel(rules=[])
cot.default = "Yes.\n**SUPPORTS**"
register_model("cot-fake", cot)
from factdebate.cli import main
sys.argv = ["factdebate", *sys.argv[1:]]
main()
"""


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return run_bounded(
        [sys.executable, "-c", CHILD, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        what="the review CLI child",
        guard_s=MODEL_GUARD_S,
        input=stdin if stdin is not None else "",
    )


def test_cli_review_resumes_in_a_later_process(tmp_path: Path) -> None:
    db = f"sqlite:{tmp_path / 'c.db'}"
    base = ["verify", CLAIM, "--method", "mad", "--model", "review-fake"]
    durable = ["--thread", "t9", "--checkpoint", db]
    first = cli(*base, *durable, "--review")
    assert first.returncode == 0, first.stderr
    assert "awaiting review" in first.stdout and "SUPPORTS" in first.stdout
    assert "--approve" in first.stdout  # how to finish it later
    bad = cli(*base, *durable, "--verdict", "MAYBE")
    assert bad.returncode == 2 and "unknown verdict 'MAYBE'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    done = cli(*base, *durable, "--verdict", "REFUTES", "--note", "a replica", "--json")
    assert done.returncode == 0, done.stderr
    import json

    result = json.loads(done.stdout)
    assert result["verdict"] == "REFUTES" and result["review"]["status"] == "overruled"
    assert result["review"]["proposed"] == "SUPPORTS" and result["review"]["note"] == "a replica"


def test_cli_review_runs_write_the_debate_page(tmp_path: Path) -> None:
    """`--html` on `--review`, then `--verdict`: the page shows the proposal, then the review."""
    db = f"sqlite:{tmp_path / 'c.db'}"
    page = tmp_path / "debate.html"
    base = ["verify", CLAIM, "--method", "mad", "--model", "review-fake", "--html", str(page)]
    durable = ["--thread", "t8", "--checkpoint", db]
    first = cli(*base, *durable, "--review")
    assert first.returncode == 0, first.stderr
    assert "Awaiting a person" in page.read_text()  # the proposal, not yet reviewed
    done = cli(*base, *durable, "--verdict", "REFUTES", "--note", "a replica")
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert 'id="review"' in html and "overruled" in html and "a replica" in html
    assert "Awaiting a person" not in html


def test_cli_history_replay_and_review_queue(tmp_path: Path) -> None:
    import json

    from tests.bench.test_runner import make_data

    db = f"sqlite:{tmp_path / 'c.db'}"
    ran = cli("verify", CLAIM, "--method", "mad", "--model", "review-fake", "--thread", "h",
              "--checkpoint", db, "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    listed = cli("history", "h", "--checkpoint", db)
    assert listed.returncode == 0, listed.stderr
    assert "next judge round 1" in listed.stdout and "(finished)" in listed.stdout
    fork = cli("replay", "h", "--from", "judge", "--checkpoint", db, "--to", "h2",
               "--judge-model", "cot-fake", "--json")  # fmt: skip
    assert fork.returncode == 0, fork.stderr
    result = json.loads(fork.stdout)
    assert result["replay"]["parent_thread"] == "h" and result["verdict"] == "SUPPORTS"
    shown = cli("replay", "h", "--from", "judge", "--checkpoint", db, "--to", "h3",
                "--judge-model", "cot-fake")  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "this fork: LLM calls 1," in shown.stdout  # the fork's one judge call
    assert "parent h up to judge: LLM calls 2," in shown.stdout  # two debaters before it
    missing = cli("replay", "nope", "--from", "judge", "--checkpoint", db)
    assert missing.returncode == 2 and "unknown thread 'nope'" in missing.stderr
    # A bench run stops every item at review; `factdebate review` walks the queue.
    data = make_data(tmp_path / "data", "SR")
    run = tmp_path / "run"
    bench = cli("bench", "--out", str(run), "--method", "cot", "--dataset", "fever-mini",
                "--data-dir", str(data), "--model", "cot-fake", "--review")  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    assert f"factdebate review {run}" in bench.stdout
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    wanted = {"SUPPORTS": "a\nlooks right\n", "REFUTES": "o\nREFUTES\nchecked\n"}
    answers = "".join(wanted[r["gold"]] for r in rows)
    walked = cli("review", str(run), stdin=answers)
    assert walked.returncode == 0, walked.stderr
    assert "2 of 2 reviewed" in walked.stdout
    assert json.loads((run / "metrics.json").read_text())["accuracy"] == 1.0
    again = cli("review", str(run))
    assert "nothing awaits review" in again.stdout


# ---- replay ---------------------------------------------------------------------------


def test_parse_start():
    assert parse_start("judge") == ("judge", None)
    assert parse_start("argue_rag@2") == ("argue_rag", 2)
    for bad in ("", "judge@", "@2", "a b", "judge@x"):
        with pytest.raises(ValueError, match="NODE or NODE@ROUND"):
            parse_start(bad)


async def test_history_lists_the_steps(scripted, fake_tools, tmp_path):
    name, _ = scripted(mad_rules(judge_continue))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await averify(CLAIM, "mad", model=name, max_rounds=2, thread="h", checkpoint=db)
    steps = await ahistory("h", checkpoint=db)
    nexts = [tuple(s["next"]) for s in steps]
    assert nexts.count(("judge",)) == 2 and nexts[-1] == ()
    assert steps[-1]["verdict"] == "REFUTES"
    with pytest.raises(ValueError, match="unknown thread"):
        await ahistory("missing", checkpoint=db)


async def test_replay_changes_the_judge_and_reruns_only_what_follows(
    scripted, fake_tools, tmp_path
):
    name, model = scripted(mad_rules(judge_continue))
    db = f"sqlite:{tmp_path / 'c.db'}"
    first = await averify(CLAIM, "mad", model=name, max_rounds=2, thread="orig", checkpoint=db)
    assert first["verdict"] == "REFUTES"
    before = await ahistory("orig", checkpoint=db)
    other, other_model = scripted([("You judge", "Actually supported.\n**SUPPORTS**")])
    calls = len(model.prompts)
    with pytest.raises(ValueError, match="several rounds"):
        await areplay("orig", "judge", checkpoint=db, model=name, judge_model=other)
    with pytest.raises(ValueError, match="has no step nope"):
        await areplay("orig", "nope", checkpoint=db, model=name)
    fork = await areplay(
        "orig", "judge@2", checkpoint=db, new_thread="fork", model=name, judge_model=other
    )
    assert fork["verdict"] == "SUPPORTS"
    assert len(model.prompts) == calls  # no debater ran again
    assert len(other_model.prompts) == 1  # only the judge of round 2
    assert fork["replay"]["parent_thread"] == "orig" and fork["replay"]["from"] == "judge@2"
    assert fork["replay"]["parent_step"] is not None
    assert len(fork["transcript"]) == 4  # the two rounds copied from the original
    # The fork's cost is its own call; what the parent spent up to the fork point is apart.
    assert fork["cost"]["total"]["llm_calls"] == 1 and set(fork["cost"]) == {"judge", "total"}
    parent = fork["replay"]["parent_cost"]["total"]["llm_calls"]
    assert parent == first["cost"]["total"]["llm_calls"] - 1
    # The original is untouched, and the fork's history names its parent.
    assert await ahistory("orig", checkpoint=db) == before
    forked = await ahistory("fork", checkpoint=db)
    assert any(s.get("replay", {}).get("parent_thread") == "orig" for s in forked)
    with pytest.raises(ValueError, match="already exists"):
        await areplay("orig", "judge@2", checkpoint=db, new_thread="fork", model=name)


async def test_replay_with_more_rounds(scripted, fake_tools, tmp_path):
    name, model = scripted(mad_rules(judge_continue))
    db = f"sqlite:{tmp_path / 'c.db'}"
    await averify(CLAIM, "mad", model=name, max_rounds=1, thread="one", checkpoint=db)
    calls = len(model.prompts)
    fork = await areplay("one", "judge@1", checkpoint=db, model=name, max_rounds=2)
    assert fork["rounds"] == 2 and fork["verdict"] == "REFUTES"
    # round 1's judge (now not the last round), round 2's two sides and its judge
    assert len(model.prompts) - calls == 4


# ---- the other methods -------------------------------------------------------------------


async def test_tool_mad_pauses_after_consensus_and_is_overruled(scripted, fake_tools, tmp_path):
    from tests.nodes.tool_mad.test_graph import JUDGE_MARK, debate_rules

    name, model = scripted(debate_rules())
    db = f"sqlite:{tmp_path / 'c.db'}"
    paused = await averify(CLAIM, "tool-mad", model=name, review=True, thread="tm", checkpoint=db)
    assert paused["proposed"]["verdict"] == "SUPPORTS"
    assert paused["proposed"]["stop_reason"] == "consensus"
    assert {d["id"] for d in paused["proposed"]["evidence"]} == {"rag-1", "web-1"}
    calls = len(model.prompts)
    done = await aresume("tm", checkpoint=db, verdict="REFUTES", note="the tower moved", model=name)
    assert (done["verdict"], done["review"]["status"]) == ("REFUTES", "overruled")
    assert done["stop_reason"] == "consensus"  # how the machine decided stays on record
    assert len(model.prompts) == calls and model.calls_with(JUDGE_MARK) == 0


async def test_debate_cv_review_offers_four_labels(scripted, tmp_path):
    from tests.nodes.debate_cv.test_graph import EVIDENCE, decision, rules

    name, _ = scripted(rules(decision(False, "SUPPORTS")))
    db = f"sqlite:{tmp_path / 'c.db'}"
    paused = await averify(
        CLAIM, "debate-cv", EVIDENCE, model=name, review=True, thread="cv", checkpoint=db
    )
    assert paused["proposed"]["choices"][-1] == "CONFLICTING"
    done = await aresume("cv", checkpoint=db, verdict="conflicting")
    assert done["verdict"] == "CONFLICTING" and done["review"]["proposed"] == "SUPPORTS"


async def test_mad_fact_graph_pauses_with_answer_level_verdicts(scripted, fake_tools):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from factdebate.graphs.mad_fact import builder
    from factdebate.nodes.mad_fact.context import MADFactContext
    from tests.nodes.mad_fact.test_graph import ANSWER, clerk_rule, confidence, opinion
    from tests.nodes.mad_fact.test_graph import CLAIM as FACT

    name, _ = scripted([clerk_rule([FACT]), confidence(0.9), opinion("TRUE")])
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "mf"}}
    context = MADFactContext(model=name, merge_method="text", review=True)
    out = await graph.ainvoke({"answer": ANSWER}, config, context=context)
    (request,) = [i.value for i in out["__interrupt__"]]
    assert request["proposed"] == "FACTUAL" and request["choices"] == ["FACTUAL", "NOT FACTUAL"]
    done = await graph.ainvoke(
        Command(resume={"verdict": "NOT FACTUAL", "note": "1889 is wrong"}), config, context=context
    )
    assert done["verdict"] == "NOT FACTUAL" and done["review"]["status"] == "overruled"
    assert done["scores"]["precision"] == 1.0  # the jury's scores are kept as they were


# ---- on a LangGraph server, through the SDK ---------------------------------------------------


@pytest.mark.slow
async def test_review_on_the_server_through_the_sdk(server: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=server)
    thread = (await client.threads.create())["thread_id"]
    context = {"model": "scripted-server", "review": True}
    paused = await client.runs.wait(thread, "tool-mad", input={"claim": CLAIM}, context=context)
    assert paused["verdict"] is None and paused["proposed_verdict"] == "SUPPORTS"
    assert paused["review"] == {"status": "pending", "proposed": "SUPPORTS"}  # not decided
    state = await client.threads.get_state(thread)
    assert state["next"] == ["human_review"]
    (request,) = [i["value"] for task in state["tasks"] for i in task["interrupts"]]
    assert request["kind"] == "review" and request["proposed"] == "SUPPORTS"
    done = await client.runs.wait(
        thread,
        "tool-mad",
        command={"resume": {"verdict": "REFUTES", "note": "a replica"}},
        context=context,
    )
    assert done["verdict"] == "REFUTES"
    assert done["review"]["status"] == "overruled" and done["review"]["note"] == "a replica"
    assert (await client.threads.get_state(thread))["next"] == []
