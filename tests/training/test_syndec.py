"""SynDeC export driven by scripted models: record shapes, Corrector use, kill-and-resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from factdebate.datasets import ClaimItem
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.training.syndec import (
    DPO_FILE,
    SFT_FILE,
    SYNDEC_FILE,
    SynDeCError,
    completed_ids,
    run_syndec,
)
from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO, doc

LABELS = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "CONFLICTING"]


def items(n: int) -> list[ClaimItem]:
    """Claims whose gold label cycles through the 4 labels."""
    return [
        ClaimItem(
            str(i),
            f"Claim number {i} is true.",
            LABELS[i % 4],
            [doc(f"{i}-qa0", f"Q: Is claim {i} true? A: evidence {i}.")],
        )
        for i in range(n)
    ]


def moderator_says_supports(prompt: str) -> str:
    """Moderator that always stops with SUPPORTS, except 'unparseable' claims."""
    if "Claim number 3 " in prompt and "UNPARSEABLE" in os.environ.get("SYNDEC_TEST", ""):
        return "no json"
    return json.dumps(
        {
            "new_insight": "i",
            "evidence_gaps": "g",
            "proceed": False,
            "reason": "clear",
            "verdict": "SUPPORTS",
            "justification": "predicted j",
        }
    )


def syndec_rules() -> list[Any]:
    return [
        ("verdict is known", '{"justification": "corrected j"}'),
        ("has just ended", moderator_says_supports),
        ("Your side: the claim is TRUE", "For it [1]."),
        ("Your side: the claim is FALSE", "Against it."),
    ]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_records_sft_dpo_and_only_wrong_verdicts_reach_corrector(scripted, tmp_path):
    name, model = scripted(syndec_rules())
    summary = await run_syndec(items(8), tmp_path, context=DebateCVContext(model=name))
    assert (summary.new, summary.correct, summary.corrected, summary.unparsed) == (8, 2, 6, 0)
    assert (summary.sft, summary.dpo) == (2, 6)
    # the Corrector ran once per wrong verdict (gold != SUPPORTS), never for correct ones
    corrector_prompts = [p for p in model.prompts if "verdict is known" in p]
    assert len(corrector_prompts) == 6
    assert not any("Claim number 0 " in p or "Claim number 4 " in p for p in corrector_prompts)
    flat = [" ".join(p.split()) for p in corrector_prompts]
    assert any("correct verdict is known: REFUTES" in p for p in flat)

    records = {r["id"]: r for r in lines(tmp_path / SYNDEC_FILE)}
    assert set(records) == {str(i) for i in range(8)}
    right, wrong = records["0"], records["1"]
    expected_keys = {
        "id",
        "claim",
        "evidence",
        "debate",
        "moderator_notes",
        "gold_verdict",
        "predicted_verdict",
        "predicted_justification",
        "corrected_justification",
        "status",
        "stop_reason",
        "rounds",
        "cost",
        "errors",
    }
    assert expected_keys <= set(right)
    assert (right["status"], right["corrected_justification"]) == ("correct", None)
    assert (wrong["gold_verdict"], wrong["predicted_verdict"]) == ("REFUTES", "SUPPORTS")
    assert (wrong["predicted_justification"], wrong["corrected_justification"]) == (
        "predicted j",
        "corrected j",
    )
    assert [t["agent"] for t in wrong["debate"]] == ["affirmative", "negative", "moderator"]
    assert wrong["evidence"][0]["id"] == "1-qa0"
    assert wrong["cost"]["corrector"]["llm_calls"] == 1 and "corrector" not in right["cost"]

    sft = lines(tmp_path / SFT_FILE)
    assert [r["id"] for r in sft] == ["0", "4"]
    system, user, assistant = sft[0]["messages"]
    assert system["role"] == "system" and "Today's date is" in system["content"]
    assert user["role"] == "user" and "Claim number 0 is true." in user["content"]
    assert "For it [1]." in user["content"] and "predicted j" not in user["content"]
    decision = {
        "new_insight": "i",
        "evidence_gaps": "g",
        "proceed": False,
        "reason": "clear",
        "verdict": "SUPPORTS",
        "justification": "predicted j",
    }
    assert json.loads(assistant["content"]) == decision
    dpo = {r["id"]: r for r in lines(tmp_path / DPO_FILE)}
    assert set(dpo) == {"1", "2", "3", "5", "6", "7"}
    assert set(dpo["1"]) == {"id", "prompt", "chosen", "rejected"}
    assert [m["role"] for m in dpo["1"]["prompt"]] == ["system", "user"]
    assert [m["role"] for m in dpo["1"]["chosen"] + dpo["1"]["rejected"]] == ["assistant"] * 2
    chosen = {**decision, "verdict": "REFUTES", "justification": "corrected j"}
    assert json.loads(dpo["1"]["chosen"][0]["content"]) == chosen
    assert json.loads(dpo["1"]["rejected"][0]["content"]) == decision


def stops_in_round_two(prompt: str) -> str:
    """Moderator that asks for a second round, then stops with SUPPORTS."""
    stop = "Round 2 has just ended" in prompt
    return json.dumps(
        {
            "new_insight": f"insight of round {2 if stop else 1}",
            "evidence_gaps": "g",
            "proceed": not stop,
            "reason": "done" if stop else "more",
            "verdict": "SUPPORTS" if stop else None,
            "justification": "two rounds j" if stop else "",
        }
    )


@pytest.mark.parametrize("max_rounds", [3, 2])
async def test_training_rows_are_the_moderators_last_call_exactly(scripted, tmp_path, max_rounds):
    """Training and use agree: each row's prompt is, character for character, what the
    moderator was sent in its final call (the round where it stopped, or the round-limit
    question), schema text and date included; the target is the answer it gave."""
    rules = [
        ("verdict is known", '{"justification": "corrected j"}'),
        ("has just ended", stops_in_round_two if max_rounds == 3 else moderator_keeps_going),
        ("reached its round limit", '{"justification": "limit j", "verdict": "SUPPORTS"}'),
        ("Your side: the claim is TRUE", "For it [1]."),
        ("Your side: the claim is FALSE", "Against it."),
    ]
    name, model = scripted(rules)
    ctx = DebateCVContext(model=name, max_rounds=max_rounds, current_date="2026-01-02")
    summary = await run_syndec(items(2), tmp_path, context=ctx)
    assert (summary.sft, summary.dpo) == (1, 1)
    sft = lines(tmp_path / SFT_FILE)[0]
    dpo = lines(tmp_path / DPO_FILE)[0]
    for row, prompt_messages, claim in (
        (sft, sft["messages"][:-1], "Claim number 0 "),
        (dpo, dpo["prompt"], "Claim number 1 "),
    ):
        moderator_calls = [
            p
            for p in model.prompts
            if claim in p
            and ("has just ended" in p or "reached its round limit" in p)
            and "verdict is known" not in p  # the Corrector's prompt
        ]
        # stop in round 2: rounds 1 and 2; round limit 2: rounds 1 and 2, then the verdict
        assert len(moderator_calls) == (2 if max_rounds == 3 else 3)
        sent = "\n".join(m["content"] for m in prompt_messages)
        assert sent == moderator_calls[-1], row["id"]
        assert "matching this JSON schema" in sent and "2026-01-02" in sent
        if max_rounds == 3:  # stopped in round 2: round 1's note is in, its own is not
            assert "insight of round 1" in sent and "insight of round 2" not in sent
        else:
            assert "round limit of 2 rounds" in sent and "more" in sent
    target = json.loads(sft["messages"][-1]["content"])
    chosen = json.loads(dpo["chosen"][0]["content"])
    if max_rounds == 3:
        assert target["justification"] == "two rounds j" and target["proceed"] is False
        assert chosen["new_insight"] == "insight of round 2" and chosen["proceed"] is False
    else:
        assert target == {"justification": "limit j", "verdict": "SUPPORTS"}
    assert (chosen["verdict"], chosen["justification"]) == ("REFUTES", "corrected j")


def moderator_keeps_going(prompt: str) -> str:
    """Moderator that always asks for another round."""
    return json.dumps({"new_insight": "i", "evidence_gaps": "g", "proceed": True, "reason": "more"})


async def test_unparseable_moderator_is_kept_but_not_corrected_nor_exported(
    scripted, tmp_path, monkeypatch
):
    monkeypatch.setenv("SYNDEC_TEST", "UNPARSEABLE")
    name, model = scripted(syndec_rules())
    summary = await run_syndec(items(4), tmp_path, context=DebateCVContext(model=name))
    assert (summary.unparsed, summary.corrected, summary.dpo) == (1, 2, 2)
    rec = next(r for r in lines(tmp_path / SYNDEC_FILE) if r["id"] == "3")
    assert rec["predicted_verdict"] is None and rec["stop_reason"] == "moderator_unparseable"
    assert rec["status"] == "unparsed" and rec["corrected_justification"] is None
    assert not any("Claim number 3 " in p for p in model.prompts if "verdict is known" in p)


async def test_unusable_corrector_output_is_recorded(scripted, tmp_path):
    name, _ = scripted([("verdict is known", "I refuse."), *syndec_rules()[1:]])
    summary = await run_syndec(items(2), tmp_path, context=DebateCVContext(model=name))
    assert (summary.corrected, summary.dpo) == (0, 0)
    rec = next(r for r in lines(tmp_path / SYNDEC_FILE) if r["id"] == "1")
    assert rec["status"] == "uncorrected"
    assert [e["agent"] for e in rec["errors"]] == ["corrector", "corrector"]


async def test_separate_corrector_model(scripted, tmp_path):
    name, debate_model = scripted(syndec_rules())
    corrector, corrector_model = scripted([("verdict is known", '{"justification": "c2"}')])
    await run_syndec(
        items(2), tmp_path, context=DebateCVContext(model=name), corrector_model=corrector
    )
    assert debate_model.calls_with("verdict is known") == 0
    assert len(corrector_model.prompts) == 1


async def test_rerun_skips_done_claims(scripted, tmp_path):
    name, model = scripted(syndec_rules())
    await run_syndec(items(3), tmp_path, context=DebateCVContext(model=name))
    calls = len(model.prompts)
    summary = await run_syndec(items(5), tmp_path, context=DebateCVContext(model=name))
    assert (summary.skipped, summary.new) == (3, 2)
    assert len(model.prompts) - calls == 2 * 3 + 1  # 2 debates (3 calls) + 1 correction
    assert sorted(r["id"] for r in lines(tmp_path / SYNDEC_FILE)) == ["0", "1", "2", "3", "4"]
    assert len(lines(tmp_path / SFT_FILE)) + len(lines(tmp_path / DPO_FILE)) == 5


async def test_failed_claim_is_not_written_and_retried(scripted, tmp_path):
    name, _ = scripted(syndec_rules())
    bad = ClaimItem("bad", "", "SUPPORTS")
    summary = await run_syndec([bad, *items(1)], tmp_path, context=DebateCVContext(model=name))
    assert summary.new == 1 and summary.failed[0][0] == "bad"
    assert "InputError" in summary.failed[0][1]
    assert completed_ids(tmp_path / SYNDEC_FILE) == {"0"}


def test_truncated_last_line_is_cut_and_redone(tmp_path):
    path = tmp_path / SYNDEC_FILE
    path.write_text('{"id": "a"}\n{"id": "b"}\n{"id": "c", "claim": "half')
    assert completed_ids(path) == {"a", "b"}
    assert path.read_text() == '{"id": "a"}\n{"id": "b"}\n'
    path.write_text('{"id": "a"}\n{"id": "b"}')  # complete record, newline lost
    assert completed_ids(path) == {"a", "b"}
    assert path.read_text() == '{"id": "a"}\n{"id": "b"}\n'


def test_corrupt_middle_line_refuses_to_resume(tmp_path):
    path = tmp_path / SYNDEC_FILE
    path.write_text('{"id": "a"}\nnot json\n{"id": "c"}\n')
    with pytest.raises(SynDeCError):
        completed_ids(path)


KILL_SCRIPT = """
import asyncio, json, sys, time
sys.path.insert(0, {repo!r})
from tests.conftest import doc  # sets the offline environment
from tests.fakes import ScriptedChatModel
from tests.training.test_syndec import items, syndec_rules
from factdebate.tools.models.providers import register_model
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.training.syndec import run_syndec

def slow(answer):
    def reply(prompt):
        time.sleep(0.03)
        return answer(prompt) if callable(answer) else answer
    return reply

name = register_model("slow", ScriptedChatModel(rules=[(k, slow(v)) for k, v in syndec_rules()]))
asyncio.run(run_syndec(items({n}), {out!r}, context=DebateCVContext(model=name)))
print("finished")
"""


async def test_killed_export_resumes_without_duplicates_or_losses(scripted, tmp_path):
    n = 40
    out = tmp_path / "out"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(KILL_SCRIPT.format(repo=str(REPO), n=n, out=str(out))))
    proc = subprocess.Popen(
        [sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    path = out / SYNDEC_FILE
    deadline = time.monotonic() + COMMAND_GUARD_S
    try:
        while time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b"\n") >= 5:
                break
            if proc.poll() is not None:
                pytest.fail(f"writer ended early: {proc.stderr.read().decode()[-2000:]}")
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the writer produced no records in time")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = completed_ids(path)
    assert 5 <= len(before) < n, "the kill must land mid-run"
    assert not (out / SFT_FILE).exists()  # exports happen only after a run completes

    name, model = scripted(syndec_rules())
    summary = await run_syndec(items(n), out, context=DebateCVContext(model=name))
    assert summary.skipped == len(before) and summary.new == n - len(before)
    ids = [r["id"] for r in lines(path)]
    assert len(ids) == len(set(ids)) == n
    assert (summary.sft, summary.dpo) == (n // 4, n - n // 4)
    for file in (SFT_FILE, DPO_FILE):
        exported = [r["id"] for r in lines(out / file)]
        assert len(exported) == len(set(exported))
