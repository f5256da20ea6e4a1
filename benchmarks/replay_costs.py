"""Calls and tokens per item with today's prompts, replaying the recorded capable-model answers.

``recorded_costs.py`` sums the prompts as they were sent when the answers were recorded
(../shared/recorded, an older commit). This script sends today's prompts instead: it runs the
current Tool-MAD, DebateCV and MADAM-RAG graphs on the recorded items (their claims, questions
and documents read back from the recorded prompts) through the OpenAI-compatible fake provider
of the test suite, which answers each call with the recorded answer of the same turn, and
counts what went over the wire (tokens estimated as characters / 4, as the recording counts
them; input = the prompt of each call, without the one-line date message; a JSON schema sent
as the provider's ``response_format`` is not counted). MAD-Fact is not replayed. Last, the 24
recorded Tool-MAD debates are replayed under both NOT ENOUGH INFO rules
(``benchmarks/replay_gate.py``): calls per claim and accuracy by gold label, in sample for the
named profiles and held out for the calibration rule.
Run: .venv/bin/python -m benchmarks.replay_costs
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import replay_gate as gate_replay  # noqa: E402
from benchmarks import run_main  # noqa: E402
from factdebate.graphs.debate_cv import graph as debate_cv_graph  # noqa: E402
from factdebate.graphs.madam_rag import graph as madam_graph  # noqa: E402
from factdebate.graphs.tool_mad import graph  # noqa: E402
from factdebate.nodes.debate_cv.context import DebateCVContext  # noqa: E402
from factdebate.nodes.madam_rag.context import MadamContext  # noqa: E402
from factdebate.nodes.tool_mad.context import ToolMADContext  # noqa: E402
from factdebate.tools import dispatch  # noqa: E402
from factdebate.tools.core.records import Evidence  # noqa: E402
from tests.capable import recorded  # noqa: E402
from tests.fake_provider import FakeProvider, fake_provider  # noqa: E402
from tests.nodes.tool_mad.test_capable_replay import (  # noqa: E402
    KAREENA,
    SPONGEBOB,
    Replay,
)

SCENARIOS: list[tuple[str, str, dict[str, Any]]] = [
    ("SpongeBob (REFUTES), defaults", SPONGEBOB, {}),
    ("Kareena (NOT ENOUGH INFO), defaults (nei_relevance=cosine)", KAREENA, {}),
    ("Kareena (NOT ENOUGH INFO), nei_relevance=ragas", KAREENA, {"nei_relevance": "ragas"}),
]


def _docs(query: str, k: int) -> list[Evidence]:
    """Any documents: the replay answers by turn, whatever was retrieved."""
    return [Evidence(id="d1", title="Doc", text=f"About {query}.", source="replay", score=1.0)]


def tokens(text: str) -> int:
    """Characters / 4, rounded up (the recording's estimate)."""
    return math.ceil(len(text) / 4)


_EVIDENCE = re.compile(r'<evidence n="\d+" id="([^"]*)" title="([^"]*)">\n(.*?)\n</evidence>', re.S)


def evidence_in(prompt: str) -> list[Evidence]:
    """The documents a recorded prompt shows, in order."""
    return [
        Evidence(id=ident, title=title, text=text, source="recorded", score=1.0)
        for ident, title, text in _EVIDENCE.findall(prompt)
    ]


def line_after(prompt: str, label: str) -> str:
    """The text after ``label`` on its last line (the claim or the question, after examples)."""
    found = re.findall(rf"^{re.escape(label)} (.+)$", prompt, re.M)
    if not found:
        raise ValueError(f"no {label!r} line in a recorded prompt")
    return str(found[-1]).strip()


def wire(provider: FakeProvider) -> tuple[int, int, int]:
    """Calls, input tokens and output tokens that went through ``provider``."""
    sent = sum(tokens(str(r["messages"][-1]["content"])) for r in provider.requests)
    received = sum(tokens(r["answer"]) for r in provider.replies)
    return len(provider.requests), sent, received


async def measure(claim: str, settings: dict[str, Any]) -> tuple[int, int, int, int, str]:
    """Calls, input and output tokens, rounds and stop reason of one replayed claim."""
    with fake_provider(Replay()) as provider:
        context = ToolMADContext(model=provider.model(), **settings)
        result: dict[str, Any] = await graph.ainvoke({"claim": claim}, context=context)
    return (*wire(provider), result["rounds"], result["stop_reason"])


def debate_cv_side(prompt: str) -> str:
    """Which DebateCV call a prompt is: affirmative, negative or moderator."""
    if "You moderate" in prompt:
        return "moderator"
    return "affirmative" if "Your side: the claim is TRUE" in prompt else "negative"


async def replay_debate_cv() -> tuple[int, int, int, int]:
    """Items, calls, input and output tokens of the recorded DebateCV claims, replayed."""
    answers: dict[tuple[str, str], list[str]] = defaultdict(list)
    items: dict[str, list[Evidence]] = {}
    for row in recorded(method="debate-cv"):
        claim = line_after(row["prompt"], "Claim:")
        items.setdefault(claim, evidence_in(row["prompt"]))
        answers[(claim, debate_cv_side(row["prompt"]))].append(row["answer"])
    served: Counter[tuple[str, str]] = Counter()

    def respond(prompt: str, body: dict[str, Any]) -> str:
        key = (line_after(prompt, "Claim:"), debate_cv_side(prompt))
        served[key] += 1
        return answers[key][(served[key] - 1) % len(answers[key])]

    calls = sent = received = 0
    for claim, evidence in items.items():
        with fake_provider(respond) as provider:
            context = DebateCVContext(model=provider.model())
            await debate_cv_graph.ainvoke({"claim": claim, "evidence": evidence}, context=context)
        more = wire(provider)
        calls, sent, received = calls + more[0], sent + more[1], received + more[2]
    return len(items), calls, sent, received


async def replay_madam() -> tuple[int, int, int, int]:
    """Items, calls, input and output tokens of the recorded MADAM-RAG questions, replayed."""
    agents: dict[tuple[str, str], list[str]] = defaultdict(list)
    aggregator: dict[str, list[str]] = defaultdict(list)
    items: dict[str, list[Evidence]] = {}
    for row in recorded(method="madam-rag"):
        question = line_after(row["prompt"], "Question:")
        if row["kind"] == "aggregator-json":
            aggregator[question].append(row["answer"])
            continue
        (doc,) = evidence_in(row["prompt"])
        if doc not in items.setdefault(question, []):
            items[question].append(doc)
        agents[(question, doc["id"])].append(row["answer"])
    served: Counter[tuple[str, str]] = Counter()

    def respond(prompt: str, body: dict[str, Any]) -> str:
        question = line_after(prompt, "Question:")
        if "You combine the answers" in prompt:
            key, replies = (question, ""), aggregator[question]
        else:
            (doc,) = evidence_in(prompt)
            key, replies = (question, doc["id"]), agents[(question, doc["id"])]
        served[key] += 1
        return replies[(served[key] - 1) % len(replies)]

    calls = sent = received = 0
    for question, documents in items.items():
        with fake_provider(respond) as provider:
            context = MadamContext(model=provider.model())
            await madam_graph.ainvoke(
                {"question": question, "documents": documents}, context=context
            )
        more = wire(provider)
        calls, sent, received = calls + more[0], sent + more[1], received + more[2]
    return len(items), calls, sent, received


def main() -> None:
    """Print the Tool-MAD rows, then one row per replayed method (per item)."""
    dispatch.override_tool("rag", _docs)
    dispatch.override_tool("search", _docs)
    print("| replayed claim, settings | calls | input tokens | output tokens | stop |")
    print("|---|---:|---:|---:|---|")
    for name, claim, settings in SCENARIOS:
        calls, sent, received, rounds, stop = asyncio.run(measure(claim, settings))
        print(f"| {name} | {calls} | {sent:,} | {received:,} | {stop}, round {rounds} |")
    print()
    print("| method | items | calls per item | input tokens per item | output tokens per item |")
    print("|---|---:|---:|---:|---:|")
    for method, replay in (("debate-cv", replay_debate_cv), ("madam-rag", replay_madam)):
        n, calls, sent, received = asyncio.run(replay())
        print(f"| {method} | {n} | {calls / n:.0f} | {sent / n:,.0f} | {received / n:,.0f} |")
    print()
    gate_replay.main([])


if __name__ == "__main__":
    run_main(main)
