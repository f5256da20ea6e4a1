"""Tool-MAD and its escalation on the 24 recorded capable-model debates, with and without ``n``.

Replays the capable model's recorded Tool-MAD answers (``../shared/recorded/tool-mad-2026-11-27
.jsonl`` and ``tool-mad-2026-11-28.jsonl``, 12 FEVER claims each) through the fake provider of
the test suite (``benchmarks/replay_gate.py`` describes the replay), once as ``tool-mad`` and once
as ``escalate-tool-mad``, each against a provider that honours ``n`` (RAGAS's answer-relevance
questions in one request) and one that does not. Prints, per gold label and in all, right
answers, model requests and tokens per claim, and for the escalation how many claims escalated
and why. ``--write-runs DIR`` also keeps a ``screen_all`` replay of the escalation (both the
screen's and the debate's outcome of every claim) as a bench run folder that
``factdebate calibrate-escalation`` reads.
Run: .venv/bin/python -m benchmarks.replay_escalation [--write-runs runs/replay-escalation]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import run_main  # noqa: E402
from benchmarks.replay_gate import RECORDED_AT, row  # noqa: E402
from factdebate.api import contract  # noqa: E402
from factdebate.graphs.registry import load_method  # noqa: E402
from factdebate.tools import dispatch  # noqa: E402
from factdebate.tools.core.files import write_atomic  # noqa: E402
from tests.fake_provider import fake_provider  # noqa: E402
from tests.nodes.tool_mad.debates import Claim, DebateReplay, claims  # noqa: E402

METHODS = ("tool-mad", "escalate-tool-mad")
TARGET_REQUESTS = 5.0
"""The escalation's most model requests per claim, on average, where the provider honours n."""


async def replay_claim(
    claim: Claim, recording: str, method: str, honours_n: bool, **settings: Any
) -> dict[str, Any]:
    """The result contract of one recorded claim replayed under ``method``."""
    graph, context_class = load_method(method)
    replay = DebateReplay((recording,))
    replay.install_tools()
    faithfulness, relevance = RECORDED_AT[recording]
    try:
        with fake_provider(replay, honours_n=honours_n) as provider:
            context = context_class(
                model=provider.model(),
                faithfulness_threshold=faithfulness,
                relevance_threshold=relevance,
                **settings,
            )
            state: dict[str, Any] = await graph.ainvoke({"claim": claim.claim}, context=context)
    finally:
        dispatch.override_tool("rag", None)
        dispatch.override_tool("search", None)
    return contract(state)


def replay_all(method: str, honours_n: bool, **settings: Any) -> list[dict[str, Any]]:
    """Rows of every recorded claim of both recordings replayed under ``method``."""
    rows = []
    for recording in RECORDED_AT:
        for claim in claims((recording,)):
            result = asyncio.run(replay_claim(claim, recording, method, honours_n, **settings))
            rows.append({**row(claim, result), "recording": recording})
    return rows


def _total(r: dict[str, Any], key: str) -> int:
    total = r["cost"].get("total", {})
    if key == "tokens":
        return int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))
    return int(total.get(key, 0))


def table(runs: dict[tuple[str, bool], list[dict[str, Any]]]) -> list[str]:
    """Markdown: per gold label and in all, right / requests / tokens per claim of each run."""
    lines = [
        "| gold | claims | method | right | requests per claim (n) | requests per claim "
        "(no n) | tokens per claim (n) |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    golds = sorted({r["gold"] for r in runs[(METHODS[0], True)]})
    for gold in [*golds, "all"]:
        for method in METHODS:
            with_n = [r for r in runs[(method, True)] if gold in ("all", r["gold"])]
            without = [r for r in runs[(method, False)] if gold in ("all", r["gold"])]
            right = sum(r["prediction"] == r["gold"] for r in with_n)
            count = len(with_n)
            lines.append(
                f"| {gold} | {count} | {method} | {right}/{count} "
                f"| {sum(_total(r, 'llm_calls') for r in with_n) / count:.1f} "
                f"| {sum(_total(r, 'llm_calls') for r in without) / count:.1f} "
                f"| {sum(_total(r, 'tokens') for r in with_n) / count:,.0f} |"
            )
    return lines


def screen_lines(rows: list[dict[str, Any]]) -> list[str]:
    """How many claims the screen settled or escalated, why, and accuracy on each part."""
    reasons = Counter(str(r["result"].get("screen", {}).get("reason")) for r in rows)
    parts: dict[bool, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        parts[bool(r["result"].get("screen", {}).get("escalated"))].append(r)
    out = [f"Screen reasons: {', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))}."]
    for escalated, label in ((False, "settled by the screen"), (True, "escalated")):
        members = parts[escalated]
        right = sum(r["prediction"] == r["gold"] for r in members)
        out.append(f"- {label}: {len(members)} claims, {right} right")
    return out


def write_run(folder: Path, method: str, rows: list[dict[str, Any]]) -> None:
    """A bench run folder holding ``rows`` (run.json and results.jsonl, written atomically)."""
    folder.mkdir(parents=True, exist_ok=True)
    run = {"method": method, "dataset": "recorded-tool-mad", "task": "verdict"}
    write_atomic(folder / "run.json", json.dumps(run) + "\n")
    write_atomic(folder / "results.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def main(argv: list[str] | None = None) -> None:
    """Print the table; with --write-runs keep a screen_all replay for calibrate-escalation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-runs", type=Path, help="write the screen_all replay here")
    args = parser.parse_args(argv)
    runs = {(m, n): replay_all(m, n) for m in METHODS for n in (True, False)}
    print("Tool-MAD and escalate-tool-mad on the 24 recorded capable-model debates (replayed)")
    print()
    print("\n".join(table(runs)))
    print()
    print("\n".join(screen_lines(runs[(METHODS[1], True)])))
    escalated = runs[(METHODS[1], True)]
    mean = sum(_total(r, "llm_calls") for r in escalated) / len(escalated)
    right = {m: sum(r["prediction"] == r["gold"] for r in runs[(m, True)]) for m in METHODS}
    kept = right[METHODS[1]] >= right[METHODS[0]]
    print(
        f"\nescalation: {right[METHODS[1]]}/24 right against tool-mad's {right[METHODS[0]]}/24 "
        f"({'kept' if kept else 'NOT kept'}), {mean:.1f} requests per claim with n "
        f"(target <= {TARGET_REQUESTS:g}: {'met' if mean <= TARGET_REQUESTS else 'NOT met'})"
    )
    if args.write_runs:
        both = replay_all(METHODS[1], True, screen_all=True)
        write_run(args.write_runs / "escalate-tool-mad-screen-all", METHODS[1], both)
        write_run(args.write_runs / "tool-mad", METHODS[0], runs[(METHODS[0], True)])
        print(f"replays written under {args.write_runs}")


if __name__ == "__main__":
    run_main(main)
