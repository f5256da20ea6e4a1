"""Tool-MAD calls and tokens per claim with today's prompts, replaying the recorded answers.

``recorded_costs.py`` sums the prompts as they were sent when the answers were recorded
(../shared/recorded, an older commit). This script sends today's prompts instead: it runs the
current Tool-MAD graph on both recorded claims through the OpenAI-compatible fake provider of
the test suite, which answers each call with the recorded answer of the same turn, and counts
what went over the wire (tokens estimated as characters / 4, as the recording counts them;
input = the prompt of each call, without the one-line date message).
Run: .venv/bin/python benchmarks/replay_costs.py
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphs.tool_mad import graph  # noqa: E402
from nodes.tool_mad.context import ToolMADContext  # noqa: E402
from tests.fake_provider import fake_provider  # noqa: E402
from tests.test_capable_tool_mad import KAREENA, SPONGEBOB, Replay  # noqa: E402
from tools import retrieval  # noqa: E402
from tools.records import Evidence  # noqa: E402

SCENARIOS: list[tuple[str, str, dict[str, Any]]] = [
    ("SpongeBob (REFUTES), defaults", SPONGEBOB, {}),
    ("Kareena (NOT ENOUGH INFO), defaults", KAREENA, {}),
    ("Kareena (NOT ENOUGH INFO), nei_relevance=cosine", KAREENA, {"nei_relevance": "cosine"}),
]


def _docs(query: str, k: int) -> list[Evidence]:
    """Any documents: the replay answers by turn, whatever was retrieved."""
    return [Evidence(id="d1", title="Doc", text=f"About {query}.", source="replay", score=1.0)]


def tokens(text: str) -> int:
    """Characters / 4, rounded up (the recording's estimate)."""
    return math.ceil(len(text) / 4)


async def measure(claim: str, settings: dict[str, Any]) -> tuple[int, int, int, int, str]:
    """Calls, input and output tokens, rounds and stop reason of one replayed claim."""
    with fake_provider(Replay()) as provider:
        context = ToolMADContext(model=provider.model(), **settings)
        result: dict[str, Any] = await graph.ainvoke({"claim": claim}, context=context)
    sent = sum(tokens(str(r["messages"][-1]["content"])) for r in provider.requests)
    received = sum(tokens(r["answer"]) for r in provider.replies)
    return len(provider.requests), sent, received, result["rounds"], result["stop_reason"]


def main() -> None:
    """Print one row per scenario."""
    retrieval.override_tool("rag", _docs)
    retrieval.override_tool("search", _docs)
    print("| replayed claim, settings | calls | input tokens | output tokens | stop |")
    print("|---|---:|---:|---:|---|")
    for name, claim, settings in SCENARIOS:
        calls, sent, received, rounds, stop = asyncio.run(measure(claim, settings))
        print(f"| {name} | {calls} | {sent:,} | {received:,} | {stop}, round {rounds} |")


if __name__ == "__main__":
    main()
