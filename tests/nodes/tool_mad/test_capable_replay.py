"""Tool-MAD replayed from a capable model's recorded answers through a provider-like server.

The fake server (tests/fake_provider.py) answers each request with the recorded answer of
the same turn, honours the output cap like a hosted provider and says when it cut an answer.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from factdebate.graphs.tool_mad import graph
from factdebate.nodes.tool_mad.context import ToolMADContext
from tests.capable import recorded
from tests.fake_provider import FakeProvider, fake_provider

SPONGEBOB = "SpongeBob SquarePants is a political agenda."
KAREENA = "Kareena Kapoor garnered positive reviews."
Turn = tuple[str, str, int]  # claim, debater, round
KINDS = {
    "Given a question and an answer, analyze the complexity": "ragas-statements",
    "Your task is to judge the faithfulness": "ragas-faithfulness-verdicts",
    "Generate a question for the given answer": "ragas-relevance-question",
    "judge of a fact-checking debate": "judge-label",
    "Write one search query": "query",
    "You may keep your previous query": "query",
    "Decide whether the claim holds": "debater-label",
}


def kind_of(prompt: str) -> str:
    return next(kind for marker, kind in KINDS.items() if marker in prompt)


def claim_of(prompt: str) -> str:
    return SPONGEBOB if "SpongeBob" in prompt else KAREENA


def escaped(text: str) -> str:
    """How a text appears inside RAGAS's JSON-rendered prompts (a distinctive prefix)."""
    return json.dumps(text, ensure_ascii=False)[1:120]


def first_statement(answer: str) -> str:
    return escaped(re.findall(r'"([^"]{20,})"', answer)[0])


class Replay:
    """Serves the recorded Tool-MAD answers turn by turn, whatever order the calls come in."""

    def __init__(self, verdicts: Callable[[str], str] = lambda answer: answer) -> None:
        self.answers: dict[tuple[str, Turn], list[str]] = defaultdict(list)
        self.judge: dict[str, str] = {}
        self.served: Counter[tuple[str, Turn]] = Counter()
        self.arguments: dict[Turn, str] = {}
        self.statements: dict[Turn, str] = {}
        counters: Counter[tuple[str, str, str]] = Counter()
        for row in recorded(method="tool-mad"):
            kind, prompt, claim = row["kind"], row["prompt"], claim_of(row["prompt"])
            if kind == "judge-label":
                self.judge[claim] = row["answer"]
                continue
            if kind in ("query", "debater-label"):
                debater = "debater_a" if "dense vector retrieval" in prompt else "debater_b"
                per_round = 1
            else:
                debater = self._debater_in(prompt, claim)
                per_round = 3 if kind == "ragas-relevance-question" else 1
            count = counters[(kind, claim, debater)]
            counters[(kind, claim, debater)] += 1
            turn = (claim, debater, count // per_round + 1)
            answer = verdicts(row["answer"]) if "verdicts" in kind else row["answer"]
            self.answers[(kind, turn)].append(answer)
            if kind == "debater-label":
                self.arguments[turn] = row["answer"]
            if kind == "ragas-statements":
                self.statements[turn] = row["answer"]

    def _debater_in(self, prompt: str, claim: str) -> str:
        return self._turn_in(prompt, claim)[1]

    def _turn_in(self, prompt: str, claim: str) -> Turn:
        """The turn whose argument (or statements) a RAGAS prompt quotes."""
        for turn, statements in self.statements.items():
            if turn[0] == claim and first_statement(statements) in prompt:
                return turn
        for turn, argument in self.arguments.items():
            if turn[0] == claim and escaped(argument) in prompt:
                return turn
        raise AssertionError("the prompt quotes no recorded turn")

    def __call__(self, prompt: str, body: dict[str, Any]) -> str:
        kind, claim = kind_of(prompt), claim_of(prompt)
        if kind == "judge-label":
            return self.judge[claim]
        if kind in ("query", "debater-label"):
            debater = "debater_a" if "dense vector retrieval" in prompt else "debater_b"
            turn = (claim, debater, self.served[(kind, (claim, debater, 0))] + 1)
            self.served[(kind, (claim, debater, 0))] += 1
        else:
            turn = self._turn_in(prompt, claim)
        answers = self.answers[(kind, turn)]
        index = self.served[(kind, turn)]
        self.served[(kind, turn)] += 1
        return answers[index % len(answers)]


def all_faithful(answer: str) -> str:
    """The verdict list a debater writing only document-backed statements would get."""
    return re.sub(r'"verdict":\s*0', '"verdict": 1', answer)


@pytest.fixture
def recorded_docs(fake_tools: dict[str, list[str]]) -> dict[str, list[str]]:
    return fake_tools


async def run(provider: FakeProvider, claim: str, **settings: Any) -> dict[str, Any]:
    context = ToolMADContext(model=provider.model(), **settings)
    result: dict[str, Any] = await graph.ainvoke({"claim": claim}, context=context)
    return result


def judge_prompts(provider: FakeProvider) -> list[str]:
    return [r["prompt"] for r in provider.replies if "judge of a fact-checking" in r["prompt"]]


async def test_replay_at_defaults_loses_no_answer_and_scores_every_turn(
    recorded_docs: dict[str, list[str]],
) -> None:
    replay = Replay()
    with fake_provider(replay) as provider:
        result = await run(provider, SPONGEBOB)
    kinds = Counter(e["kind"] for e in result["errors"])
    assert kinds["truncated"] == 0 and kinds["parse_error"] == 0, result["errors"]
    assert all(r["finish"] == "stop" for r in provider.replies)
    turns = result["transcript"]
    assert len(turns) == 6 and all(t["faithfulness"] is not None for t in turns)
    assert turns[0]["faithfulness"] == pytest.approx(4 / 12)  # what the recorded verdicts say
    # Scores below 0.7 with agreement: the judge decides, and its prompt says why.
    assert result["stop_reason"] == "round_limit" and result["verdict"] == "REFUTES"
    (prompt,) = judge_prompts(provider)
    assert "both agents concluded REFUTES" in prompt and "is below 0.70" in prompt
    assert "disagreed" not in prompt


async def test_caps_reach_the_provider_per_stage(recorded_docs: dict[str, list[str]]) -> None:
    with fake_provider(Replay()) as provider:
        await run(provider, SPONGEBOB, max_rounds=1)
    caps = {
        kind_of(r["messages"][-1]["content"]): r.get("max_completion_tokens")
        for r in provider.requests
    }
    assert caps["ragas-faithfulness-verdicts"] == 2048 and caps["debater-label"] == 1024
    # Stages whose recorded answers are short are asked under their own caps (tools/models/caps)
    assert caps["query"] == 64 and caps["ragas-relevance-question"] == 128
    assert caps["ragas-statements"] == 768
    structured = [r for r in provider.requests if "ragas" in kind_of(r["messages"][-1]["content"])]
    assert structured and all(r["response_format"]["type"] == "json_schema" for r in structured)


async def test_relevance_questions_are_sampled_not_repeated(
    recorded_docs: dict[str, list[str]],
) -> None:
    with fake_provider(Replay()) as provider:
        await run(provider, SPONGEBOB, max_rounds=1)
    question_calls = [
        r for r in provider.requests if "Generate a question" in r["messages"][-1]["content"]
    ]
    assert len(question_calls) == 6  # 3 per debater, concurrently
    assert {r.get("temperature") for r in question_calls} == {0.7}


async def test_at_a_512_cap_cut_verdicts_are_recorded_and_retried(
    recorded_docs: dict[str, list[str]],
) -> None:
    with fake_provider(Replay()) as provider:
        result = await run(provider, SPONGEBOB, max_rounds=1, scorer_max_output_tokens=512)
    truncated = [e for e in result["errors"] if e["kind"] == "truncated"]
    assert truncated and all(e["stage"].startswith("score:") for e in truncated)
    caps = [
        r.get("max_completion_tokens")
        for r in provider.requests
        if "judge the faithfulness" in r["messages"][-1]["content"]
    ]
    assert caps.count(512) == 2 and caps.count(1024) == 2  # each asked again at twice the cap
    # Round 1's verdict lists run ~880-930 tokens: the second attempt reads in full.
    assert all(t["faithfulness"] is not None for t in result["transcript"])
    calls = result["cost"]["total"]["llm_calls"]
    assert calls == 2 + 2 + 2 * (2 + 1 + 3) + 1  # the retries count; scores < 0.7: a judge


async def test_a_cut_that_survives_the_retry_is_recorded_never_scored(
    recorded_docs: dict[str, list[str]],
) -> None:
    with fake_provider(Replay()) as provider:
        result = await run(provider, SPONGEBOB, max_rounds=1, scorer_max_output_tokens=256)
    # 256 then 512 tokens both cut the ~900-token verdict lists: faithfulness is unavailable
    # and the reason is recorded; a cut list is never scored as if it were shorter.
    assert all(t["faithfulness"] is None for t in result["transcript"])
    kinds = Counter(e["kind"] for e in result["errors"])
    assert kinds["truncated"] >= 4 and kinds["parse_error"] >= 2
    assert result["stop_reason"] == "round_limit"


async def test_grounded_answers_with_passing_scores_stop_after_round_one(
    recorded_docs: dict[str, list[str]],
) -> None:
    with fake_provider(Replay(verdicts=all_faithful)) as provider:
        result = await run(provider, SPONGEBOB)
    assert result["stop_reason"] == "consensus" and result["rounds"] == 1
    assert result["verdict"] == "REFUTES"
    assert all(
        t["faithfulness"] == 1.0 and t["answer_relevance"] > 0.8 for t in result["transcript"]
    )
    assert not judge_prompts(provider)
    assert result["cost"]["total"]["llm_calls"] == 2 + 2 + 2 * (2 + 3)  # query, argue, scores


async def test_disagreement_reaches_the_judge_as_a_disagreement(
    recorded_docs: dict[str, list[str]],
) -> None:
    def flip_b(prompt: str, body: dict[str, Any]) -> str:
        answer = replay(prompt, body)
        if "Decide whether the claim holds" in prompt and "search engine" in prompt:
            return answer.replace("**REFUTES**", "**NOT ENOUGH INFO**")
        return answer

    replay = Replay()
    with fake_provider(flip_b) as provider:
        result = await run(provider, SPONGEBOB)
    (prompt,) = judge_prompts(provider)
    assert "the agents disagreed (debater_a: REFUTES, debater_b: NOT ENOUGH INFO)" in prompt
    assert result["stop_reason"] == "round_limit"


async def test_every_recorded_run_replays_at_defaults(recorded_docs: dict[str, list[str]]) -> None:
    replay = Replay()
    with fake_provider(replay) as provider:
        result = await run(provider, KAREENA)
    assert not [e for e in result["errors"] if e["kind"] in ("truncated", "parse_error")]
    assert result["verdict"] == "NOT ENOUGH INFO"
    assert all(t["faithfulness"] is not None for t in result["transcript"])


async def test_recorded_nei_agreement_stops_in_round_one_with_cosine_relevance(
    recorded_docs: dict[str, list[str]],
) -> None:
    # The recorded relevance questions of the NOT ENOUGH INFO claim restate it word for word
    # but are flagged noncommittal: RAGAS's rule (nei_relevance=ragas) scores them 0, so the
    # debate ran to the judge; the default (cosine) keeps the cosine and round 1 settles it.
    with fake_provider(Replay()) as provider:
        ragas = await run(provider, KAREENA, max_rounds=1, nei_relevance="ragas")
    assert all(t["answer_relevance"] == 0 for t in ragas["transcript"])
    with fake_provider(Replay()) as provider:
        result = await run(provider, KAREENA)
    assert result["stop_reason"] == "consensus" and result["rounds"] == 1
    assert result["verdict"] == "NOT ENOUGH INFO"
    assert all(
        t["faithfulness"] >= 0.7 and t["answer_relevance"] > 0.8 for t in result["transcript"]
    )
    assert result["cost"]["total"]["llm_calls"] == 2 + 2 + 2 * (2 + 3) and not judge_prompts(
        provider
    )
