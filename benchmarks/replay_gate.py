"""Tool-MAD's stability gate on the 12 recorded debates: rounds and calls per claim, by profile.

Replays the capable model's recorded answers of ``../shared/recorded/tool-mad-2026-11-27.jsonl``
(12 FEVER claims, paper defaults when recorded) through today's Tool-MAD graph and the fake
provider of the test suite, once per gate profile: each call gets the recorded answer of its
turn, the retrieval tools give back the documents the recorded debater saw, and RAGAS scores
come from the recorded verdicts and questions, embedded by the shipped MiniLM. The replay
holds no answer for a round the recording did not reach, so a profile stricter than the
recorded run's cannot be replayed past it (both profiles here are at most as strict).

``--write-run DIR`` also writes the ``paper`` replay as a bench run folder (``run.json``,
``results.jsonl`` with each item's whole result), which ``factdebate calibrate-gate DIR``
reads: that is how the shipped ``minilm`` profile was calibrated.
Run: .venv/bin/python -m benchmarks.replay_gate [--write-run runs/replay-paper]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factdebate.api import contract  # noqa: E402
from factdebate.graphs.tool_mad import graph  # noqa: E402
from factdebate.nodes.tool_mad.context import ToolMADContext  # noqa: E402
from factdebate.nodes.tool_mad.gate import GateProfileName  # noqa: E402
from factdebate.tools import dispatch  # noqa: E402
from factdebate.tools.core.files import write_atomic  # noqa: E402
from tests.fake_provider import fake_provider  # noqa: E402
from tests.nodes.tool_mad.debates import Claim, DebateReplay, claims  # noqa: E402

PROFILES: tuple[GateProfileName, ...] = ("paper", "auto")
"""The profiles compared: the paper's numbers, and the default (``auto``: MiniLM's profile)."""


async def replay_claim(claim: Claim, profile: GateProfileName) -> tuple[dict[str, Any], int]:
    """The result contract of one recorded claim replayed under ``profile``, and answers missed."""
    replay = DebateReplay()
    replay.install_tools()
    try:
        with fake_provider(replay) as provider:
            context = ToolMADContext(model=provider.model(), gate_profile=profile)
            state: dict[str, Any] = await graph.ainvoke({"claim": claim.claim}, context=context)
    finally:
        dispatch.override_tool("rag", None)
        dispatch.override_tool("search", None)
    return contract(state), len(replay.missed)


def row(claim: Claim, result: dict[str, Any]) -> dict[str, Any]:
    """A results.jsonl row as the bench writes it (the fields calibrate-gate reads)."""
    return {
        "id": claim.id,
        "claim": claim.claim,
        "gold": claim.gold,
        "prediction": result.get("verdict"),
        "stop_reason": result.get("stop_reason"),
        "rounds": result.get("rounds"),
        "cost": result.get("cost") or {},
        "errors": result.get("errors") or [],
        "result": result,
    }


def replay_all(profile: GateProfileName) -> tuple[list[dict[str, Any]], int]:
    """Every recorded claim under ``profile``: rows, and answers the replay could not serve."""
    rows, missed = [], 0
    for claim in claims():
        result, lost = asyncio.run(replay_claim(claim, profile))
        rows.append(row(claim, result))
        missed += lost
    return rows, missed


def by_gold(rows: list[dict[str, Any]]) -> dict[str, list[tuple[int, int]]]:
    """(rounds, calls) per claim, grouped by gold label."""
    grouped: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for r in rows:
        calls = int(r["cost"].get("total", {}).get("llm_calls", 0))
        grouped[r["gold"]].append((int(r["rounds"]), calls))
    return dict(sorted(grouped.items()))


def table(results: dict[GateProfileName, list[dict[str, Any]]]) -> list[str]:
    """Markdown: per profile and gold label, claims, rounds and calls per claim, accuracy."""
    lines = [
        "| profile (faithfulness / relevance) | gold | claims | rounds per claim | "
        "calls per claim | right | judge decided |",
        "|---|---|---:|---|---|---:|---:|",
    ]
    for profile, rows in results.items():
        bounds = ToolMADContext(gate_profile=profile).thresholds()
        name = f"{profile} = {bounds.source}" if profile == "auto" else profile
        name += f" ({bounds.faithfulness:.2f} / {bounds.relevance:.2f})"
        groups = by_gold(rows)
        for gold, pairs in [*groups.items(), ("all", [p for g in groups.values() for p in g])]:
            picked = [r for r in rows if gold in ("all", r["gold"])]
            right = sum(r["prediction"] == r["gold"] for r in picked)
            judged = sum(r["stop_reason"] == "round_limit" for r in picked)
            rounds = ", ".join(str(p[0]) for p in pairs)
            calls = ", ".join(str(p[1]) for p in pairs)
            mean_r = sum(p[0] for p in pairs) / len(pairs)
            mean_c = sum(p[1] for p in pairs) / len(pairs)
            lines.append(
                f"| {name} | {gold} | {len(pairs)} | {rounds} (mean {mean_r:.2f}) | "
                f"{calls} (mean {mean_c:.1f}) | {right}/{len(pairs)} | {judged} |"
            )
    return lines


def write_run(folder: Path, rows: list[dict[str, Any]]) -> None:
    """A bench run folder holding ``rows`` (run.json and results.jsonl, written atomically)."""
    folder.mkdir(parents=True, exist_ok=True)
    run = {"method": "tool-mad", "dataset": "recorded-tool-mad-2026-11-27", "task": "verdict"}
    write_atomic(folder / "run.json", json.dumps(run) + "\n")
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    write_atomic(folder / "results.jsonl", text)


def main(argv: list[str] | None = None) -> None:
    """Print the per-profile table; with --write-run, keep the paper replay as a run folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-run", type=Path, help="write the paper replay here")
    args = parser.parse_args(argv)
    results: dict[GateProfileName, list[dict[str, Any]]] = {}
    missed = 0
    for profile in PROFILES:
        results[profile], lost = replay_all(profile)
        missed += lost
    print("Stability gate on the 12 recorded Tool-MAD debates (replayed, MiniLM relevance):")
    print()
    print("\n".join(table(results)))
    print()
    print(f"recorded answers the replay could not serve: {missed}")
    if args.write_run:
        write_run(args.write_run, results["paper"])
        print(f"paper replay written to {args.write_run}/results.jsonl")


if __name__ == "__main__":
    main()
