"""Prompt frictions a capable model reported, each checked where it could recur."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from factdebate.graphs.debate_cv import graph as debate_cv_graph
from factdebate.graphs.madam_rag import graph as madam_graph
from factdebate.graphs.tool_mad import graph as tool_mad_graph
from factdebate.nodes.debate_cv.context import DebateCVContext
from factdebate.nodes.mad_fact.jury import cap_opinion, render_pool
from factdebate.nodes.mad_fact.state import JuryTurn
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.prompts import tool_mad as prompts
from factdebate.tools.scoring.ragas_metrics import checked_text
from tests.capable import recorded
from tests.conftest import doc

NEI_CLAIM = "The Eiffel Tower is 500 metres tall."
ARGUE_MARK = "Decide whether the claim holds"
JUDGE_MARK = "You are the judge"
STATEMENTS = "StatementGeneratorOutput"
SILENT = (
    "Document 1 says the Eiffel Tower stands in Paris [1]. None of the documents mentions "
    "the height of the tower."
)


def quoted_input(prompt: str) -> dict[str, Any]:
    """The input a RAGAS prompt ends with (after its worked examples)."""
    body = prompt.rsplit("input: ", 1)[-1].rsplit("Output:", 1)[0]
    value: dict[str, Any] = json.loads(body)
    return value


def sentences(prompt: str) -> list[str]:
    """The sentences of the answer a RAGAS statements prompt quotes."""
    answer = quoted_input(prompt)["answer"]
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", answer) if s.strip()]


def faithful_json(prompt: str) -> str:
    """A scorer that backs every statement it is given."""
    statements = quoted_input(prompt)["statements"]
    verdicts = [{"statement": s, "reason": "stated", "verdict": 1} for s in statements]
    return json.dumps({"statements": verdicts})


def nei_rules(noncommittal: int = 1) -> list[Any]:
    """Both debaters: a grounded 'the documents are silent' answer; later they agree."""

    def argue(prompt: str) -> str:
        agree = "I agree with the other agent. " if "Other agent's answer" in prompt else ""
        return f"{agree}{SILENT}\n\n**NOT ENOUGH INFO**"

    def statements(prompt: str) -> str:
        return json.dumps({"statements": sentences(prompt)})

    def question(prompt: str) -> str:
        return json.dumps({"question": NEI_CLAIM, "noncommittal": noncommittal})

    return [
        (STATEMENTS, statements),
        ("NLIStatementOutput", faithful_json),
        ("AnswerRelevanceOutput", question),
        (JUDGE_MARK, "Nothing gives the height.\n**NOT ENOUGH INFO**"),
        ("inside square brackets", "[Eiffel Tower height]"),
        (ARGUE_MARK, argue),
    ]


async def run_tool_mad(model: str, **settings: Any) -> dict[str, Any]:
    context = ToolMADContext(model=model, **settings)
    result: dict[str, Any] = await tool_mad_graph.ainvoke({"claim": NEI_CLAIM}, context=context)
    return result


# --- 1. Tool-MAD: the documents' silence, agreement, and what faithfulness checks ----------


def test_the_debater_prompt_allows_silence_and_agreement_sentences() -> None:
    style = prompts.GROUNDED_STYLE
    assert "None of the documents mentions" in style and "does not mention" in style
    for sentence in prompts.AGREEMENT_SENTENCES:
        assert f'"{sentence}"' in " ".join(style.split())
    assert "not checked against the" in style  # the debater is told which sentences count


def test_only_the_label_line_and_the_fixed_agreement_sentences_go_unchecked() -> None:
    answer = (
        "I agree with the other agent. Document 1 dates the tower to 1889 [1].\n"
        "The other agent agrees that it is in Paris. None of the documents mentions its height."
        "\n\nVerdict: **NOT ENOUGH INFO**"
    )
    kept = checked_text(answer, prompts.UNCHECKED_SENTENCES)
    assert kept == (
        "Document 1 dates the tower to 1889 [1].\n"
        "The other agent agrees that it is in Paris. None of the documents mentions its height."
    )
    # An agreement sentence that carries a fact is checked like any other sentence.
    loaded = "I agree with the other agent that it opened in 1889.\n**SUPPORTS**"
    assert checked_text(loaded, prompts.UNCHECKED_SENTENCES) == loaded.splitlines()[0]


def test_recorded_answers_lose_only_their_label_line() -> None:
    rows = recorded(kind="debater-label", method="tool-mad")
    assert rows
    for row in rows:
        answer = row["answer"].strip()
        kept = checked_text(answer, prompts.UNCHECKED_SENTENCES)
        body = answer.rsplit("\n", 1)[0].strip()
        assert kept == body, answer[-200:]
        assert json.dumps(kept)[1:120] == json.dumps(answer)[1:120]  # replay keys still match


def test_recorded_verdicts_back_silence_and_never_the_label_or_the_other_agent() -> None:
    """Why silence sentences are checked and the label/agreement sentences are not."""
    silence = re.compile(r"(does|do) not (mention|concern)|says nothing|mentions no|None of", re.I)
    by_kind: dict[str, list[int]] = {"silence": [], "label": [], "other agent": []}
    for row in recorded(kind="ragas-faithfulness-verdicts", method="tool-mad"):
        match = re.search(r"```(?:json)?\s*(.*?)```", row["answer"], re.S)
        for item in json.loads(match.group(1) if match else row["answer"])["statements"]:
            text = item["statement"]
            if text.startswith("The verdict on the claim"):
                by_kind["label"].append(item["verdict"])
            elif "other agent" in text.lower():
                by_kind["other agent"].append(item["verdict"])
            elif silence.search(text) and "relevant" not in text:
                by_kind["silence"].append(item["verdict"])
    assert len(by_kind["silence"]) >= 20 and set(by_kind["silence"]) == {1}
    assert by_kind["label"] == [0] * 12  # every scored turn lost one statement to its label
    assert by_kind["other agent"] and set(by_kind["other agent"]) == {0}


async def test_statement_step_never_sees_the_label_or_agreement_sentence(
    scripted: Any, fake_tools: Any
) -> None:
    name, model = scripted(nei_rules())
    await run_tool_mad(name, max_rounds=2, nei_relevance="ragas")  # two rounds, two agreements
    statement_prompts = [p for p in model.prompts if STATEMENTS in p]
    assert len(statement_prompts) == 4  # two debaters, two rounds
    for prompt in statement_prompts:
        quoted = sentences(prompt)
        assert "None of the documents mentions the height of the tower." in quoted
        assert not any("agree with the other agent" in s or "NOT ENOUGH INFO" in s for s in quoted)
    # Answer relevance still reads the whole answer, label line included.
    relevance = [p for p in model.prompts if "AnswerRelevanceOutput" in p]
    assert relevance and all("NOT ENOUGH INFO" in p for p in relevance)


async def test_an_answer_with_nothing_to_check_has_no_faithfulness(
    scripted: Any, fake_tools: Any
) -> None:
    rules = nei_rules()
    rules[-1] = (ARGUE_MARK, "I agree with the other agent.\n**NOT ENOUGH INFO**")
    name, model = scripted(rules)
    out = await run_tool_mad(name, max_rounds=1, nei_relevance="cosine")
    assert all(t["faithfulness"] is None for t in out["transcript"])
    assert model.calls_with(STATEMENTS) == 0  # no scorer call for an empty statement list
    assert any("no sentence to check" in e["message"] for e in out["errors"])
    assert out["stop_reason"] == "round_limit"  # an unavailable score never passes


# --- 2. The opt-in setting for NOT ENOUGH INFO relevance ---------------------------------


async def test_with_ragas_a_supported_nei_agreement_runs_to_the_judge(
    scripted: Any, fake_tools: Any
) -> None:
    name, model = scripted(nei_rules())
    out = await run_tool_mad(name, nei_relevance="ragas")
    assert out["stop_reason"] == "round_limit" and out["rounds"] == 3
    assert all(t["faithfulness"] == 1.0 and t["answer_relevance"] == 0 for t in out["transcript"])
    (judge,) = [p for p in model.prompts if JUDGE_MARK in p]
    assert prompts.RELEVANCE_NOTE_RAGAS.strip() in " ".join(judge.split())


async def test_by_default_cosine_a_supported_nei_agreement_stops_in_round_one(
    scripted: Any, fake_tools: Any
) -> None:
    name, model = scripted(nei_rules())
    out = await run_tool_mad(name)
    assert out["stop_reason"] == "consensus" and out["rounds"] == 1
    assert out["verdict"] == "NOT ENOUGH INFO"
    assert all(t["answer_relevance"] == pytest.approx(1.0, abs=1e-3) for t in out["transcript"])
    assert model.calls_with(JUDGE_MARK) == 0


async def test_cosine_leaves_other_labels_to_the_ragas_rule(scripted: Any, fake_tools: Any) -> None:
    rules = nei_rules()
    rules[-1] = (ARGUE_MARK, f"{SILENT}\n\n**REFUTES**")
    name, _ = scripted(rules)
    out = await run_tool_mad(name, max_rounds=1, nei_relevance="cosine")
    assert all(t["answer_relevance"] == 0 for t in out["transcript"])  # noncommittal: 0


async def test_cosine_with_committal_questions_changes_nothing(
    scripted: Any, fake_tools: Any
) -> None:
    for setting in ("ragas", "cosine"):
        name, _ = scripted(nei_rules(noncommittal=0))
        out = await run_tool_mad(name, nei_relevance=setting)
        assert out["stop_reason"] == "consensus" and out["rounds"] == 1


def test_the_setting_is_bounded() -> None:
    with pytest.raises(ValueError, match="nei_relevance must be ragas or cosine"):
        ToolMADContext(nei_relevance="always")  # type: ignore[arg-type]


# --- 3. The judge names last-round and average scores ------------------------------------


async def test_the_judge_prompt_names_last_round_and_average_scores(
    scripted: Any, fake_tools: Any
) -> None:
    name, model = scripted(nei_rules())
    await run_tool_mad(name, max_rounds=2, nei_relevance="ragas")
    (judge,) = [p for p in model.prompts if JUDGE_MARK in p]
    # the default profile (auto: MiniLM's, 0.70 / 0.63) names its own threshold
    assert "in that last round, debater_a's answer relevance 0.00 is below 0.63" in judge
    assert "The reason above quotes last-round scores" in " ".join(judge.split())
    scores = judge.split("Scores:\n")[-1]
    assert (
        "- debater_a (rag): average over 2 rounds: faithfulness 1.00, answer relevance 0.00; "
        "last round (2): faithfulness 1.00, answer relevance 0.00"
    ) in scores


async def test_with_cosine_the_judge_gets_no_noncommittal_note(
    scripted: Any, fake_tools: Any
) -> None:
    rules = nei_rules()
    rules[-1] = (
        ARGUE_MARK,
        lambda p: f"{SILENT}\n**{'REFUTES' if 'local document' in p else 'NOT ENOUGH INFO'}**",
    )
    name, model = scripted(rules)
    out = await run_tool_mad(name, max_rounds=1, nei_relevance="cosine")
    assert out["stop_reason"] == "round_limit"
    (judge,) = [p for p in model.prompts if JUDGE_MARK in p]
    assert "noncommittal" not in judge and "the agents disagreed" in judge


# --- 4. MAD-Fact: other jurors' opinions cut at a boundary, visibly -----------------------

OPINION = (
    "The claim names Barack Obama, the 44th president. " * 20
    + "However the list is not the number of presidents claimed, which is two. " * 10
)


def test_a_long_opinion_is_cut_at_a_sentence_end_with_a_marker() -> None:
    capped = cap_opinion(OPINION, 1500)
    kept, marker = capped.split(" [... ")
    assert len(kept) <= 1500 and kept.endswith(".")
    assert marker == f"{len(OPINION) - len(kept)} more characters cut]"
    assert OPINION.startswith(kept)


def test_without_a_sentence_end_the_cut_falls_between_words() -> None:
    words = " ".join(["numbered"] * 400)
    kept = cap_opinion(words, 1500).split(" [... ")[0]
    assert kept.endswith("numbered") and len(kept) <= 1500
    assert cap_opinion("short.", 1500) == "short."


def test_the_pool_never_shows_a_word_cut_in_half() -> None:
    turns = [JuryTurn(agent="critic", round=1, answer=OPINION + "\n**TRUE**")]
    pool = render_pool(turns, 1500)
    assert "more characters cut]" in pool
    before = pool.split(" [... ")[0]
    assert before.endswith("two.") or before.endswith("president.")


# --- 5. MADAM-RAG and DebateCV wording against the papers' code and definitions -----------

NBA = "Michael Jeffrey Jordan (born February 17, 1963) is a basketball player."
PROF = "Michael Irwin Jordan (born February 25, 1956) is a Berkeley professor."
AGENT_MARK = "You are one of several agents"


async def test_madam_agents_answer_from_document_and_others_in_later_rounds(scripted: Any) -> None:
    agent = json.dumps({"answer": "1963", "explanation": "The document says so."})
    aggregate = json.dumps({"answers": ["1963", "1956"], "explanation": "Two people."})
    calls = iter(range(100))

    def agent_reply(prompt: str) -> str:  # round 2 changes its answer: a third round is needed
        return agent if next(calls) < 2 else agent.replace("1963", "1963; 1956")

    name, model = scripted([("You combine the answers", aggregate), (AGENT_MARK, agent_reply)])
    documents = [doc("1", NBA), doc("2", PROF)]
    await madam_graph.ainvoke(
        {"question": "When was Michael Jordan born?", "documents": documents},
        context=MadamContext(model=name, max_rounds=2),
    )
    agent_prompts = [p for p in model.prompts if AGENT_MARK in p]
    assert len(agent_prompts) == 4
    for prompt in agent_prompts[:2]:
        assert "answer from your document alone" in prompt
        assert "all the answers when it names several" in prompt
        assert "One short answer" not in prompt
    for prompt in agent_prompts[2:]:
        assert "based on your document and their answers" in prompt
        assert "additional information" in prompt


async def test_debate_cv_moderator_separates_conflicting_from_refutes(scripted: Any) -> None:
    verdict = json.dumps(
        {
            "new_insight": "x",
            "evidence_gaps": "none",
            "proceed": False,
            "reason": "clear",
            "verdict": "REFUTES",
            "justification": "The central statement is contradicted.",
        }
    )
    name, model = scripted([("You moderate", verdict)], default="Argument [1].")
    await debate_cv_graph.ainvoke(
        {
            "claim": "The bridge, opened in 1990, is the longest in Europe.",
            "evidence": [doc("1", "It opened in 1990.")],
        },
        context=DebateCVContext(model=name),
    )
    moderator = next(p for p in model.prompts if "You moderate" in p)
    text = " ".join(moderator.split())
    assert "is REFUTES even when some of its details are true" in text
    assert "CONFLICTING: the claim misleads but is not explicitly contradicted" in text
