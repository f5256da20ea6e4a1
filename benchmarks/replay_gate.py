"""Tool-MAD's stability gate on the 24 recorded debates: in-sample and held-out, both NEI rules.

Replays the capable model's recorded answers (``../shared/recorded/tool-mad-2026-11-27.jsonl``
and ``tool-mad-2026-11-28.jsonl``, 12 FEVER claims each) through today's Tool-MAD graph and the
fake provider of the test suite: each call gets the recorded answer of its turn, the retrieval
tools give back the documents the recorded debater saw, and RAGAS scores come from the recorded
verdicts and questions, embedded by the shipped MiniLM. Each recording is replayed at the
thresholds it was recorded with (2026-11-27: the paper's 0.70 / 0.80; 2026-11-28: 0.70 / 0.66):
the replay holds no answer for a round the recording did not reach, so it cannot run stricter
than the recording.

Both readings of answer relevance for NOT ENOUGH INFO answers (``nei_relevance``) are replayed:
``ragas`` (RAGAS's noncommittal rule: 0) and ``cosine`` (the paper's formula, the mean cosine).
For each, the calibration rule of ``factdebate calibrate-gate`` is applied to all 24 claims
(in sample) and claim by claim with the claim left out (held out), and the named profiles are
scored in sample. ``--write-runs DIR`` keeps every replay as a bench run folder
(``DIR/<rule>/<recording>``), which ``factdebate calibrate-gate`` reads.
Run: .venv/bin/python -m benchmarks.replay_gate [--write-runs runs/replay-gate]
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

from benchmarks import run_main  # noqa: E402
from factdebate.api import contract  # noqa: E402
from factdebate.bench.judging.calibration import (  # noqa: E402
    effect,
    effect_table,
    held_out,
    held_out_table,
    propose,
    run_record,
)
from factdebate.graphs.tool_mad import graph  # noqa: E402
from factdebate.nodes.tool_mad.context import ToolMADContext  # noqa: E402
from factdebate.nodes.tool_mad.gate import PROFILES  # noqa: E402
from factdebate.tools import dispatch  # noqa: E402
from factdebate.tools.core.files import write_atomic  # noqa: E402
from tests.fake_provider import fake_provider  # noqa: E402
from tests.nodes.tool_mad.debates import Claim, DebateReplay, claims  # noqa: E402

RECORDED_AT = {"2026-11-27": (0.7, 0.8), "2026-11-28": (0.7, 0.66)}
"""Each recording and the (faithfulness, relevance) thresholds it was recorded with."""
NEI_RULES = ("ragas", "cosine")


async def replay_claim(
    claim: Claim, recording: str, nei_relevance: str
) -> tuple[dict[str, Any], int]:
    """The result contract of one recorded claim replayed, and the answers it missed."""
    replay = DebateReplay((recording,))
    replay.install_tools()
    faithfulness, relevance = RECORDED_AT[recording]
    try:
        with fake_provider(replay) as provider:
            context = ToolMADContext(
                model=provider.model(),
                faithfulness_threshold=faithfulness,
                relevance_threshold=relevance,
                nei_relevance=nei_relevance,  # type: ignore[arg-type]
            )
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


def replay_recording(recording: str, nei_relevance: str) -> tuple[list[dict[str, Any]], int]:
    """Every claim of ``recording`` replayed: rows, and answers the replay could not serve."""
    rows, missed = [], 0
    for claim in claims((recording,)):
        result, lost = asyncio.run(replay_claim(claim, recording, nei_relevance))
        rows.append(row(claim, result))
        missed += lost
    return rows, missed


def write_run(folder: Path, recording: str, rows: list[dict[str, Any]]) -> None:
    """A bench run folder holding ``rows`` (run.json and results.jsonl, written atomically)."""
    folder.mkdir(parents=True, exist_ok=True)
    run = {"method": "tool-mad", "dataset": f"recorded-tool-mad-{recording}", "task": "verdict"}
    write_atomic(folder / "run.json", json.dumps(run) + "\n")
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    write_atomic(folder / "results.jsonl", text)


def recorded_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown: the replays as run, per gold label (claims, calls per claim, right)."""
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        grouped[r["gold"]].append(r)
    lines = ["| gold | claims | calls per claim | right |", "|---|---:|---:|---:|"]
    for gold, members in [*sorted(grouped.items()), ("all", rows)]:
        calls = [int(r["cost"].get("total", {}).get("llm_calls", 0)) for r in members]
        right = sum(r["prediction"] == r["gold"] for r in members)
        lines.append(
            f"| {gold} | {len(members)} | {sum(calls) / len(calls):.1f} | {right}/{len(members)} |"
        )
    return lines


def report(rule: str, rows: list[dict[str, Any]]) -> list[str]:
    """The in-sample and held-out tables of one NEI rule over every replayed claim."""
    runs = [run for row_ in rows if (run := run_record(row_)) is not None]
    found = propose(runs)
    f, r = found["faithfulness"].threshold, found["relevance"].threshold
    effects = [effect(runs, "proposed (in sample)", f, r)]
    effects += [effect(runs, p.name, p.faithfulness, p.relevance) for p in PROFILES.values()]
    return [
        f"## nei_relevance={rule}",
        "",
        "As replayed (each recording at its recorded thresholds):",
        "",
        *recorded_table(rows),
        "",
        f"Rule (keep 0.90 of right agreements, ceilings 0.70 / 0.80) on all {len(runs)} claims: "
        f"faithfulness {f:.2f}, relevance {r:.2f}. In sample:",
        "",
        *effect_table(effects),
        "",
        *held_out_table(held_out(runs)),
        "",
    ]


def main(argv: list[str] | None = None) -> None:
    """Print both NEI rules' tables; with --write-runs, keep every replay as a run folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-runs", type=Path, help="write each replay here, by rule")
    args = parser.parse_args(argv)
    missed = 0
    print("Stability gate on the 24 recorded Tool-MAD debates (replayed, MiniLM relevance)")
    print()
    for rule in NEI_RULES:
        rows: list[dict[str, Any]] = []
        for recording in RECORDED_AT:
            found, lost = replay_recording(recording, rule)
            missed += lost
            rows += found
            if args.write_runs:
                write_run(args.write_runs / rule / recording, recording, found)
        print("\n".join(report(rule, rows)))
    print(f"recorded answers the replay could not serve: {missed}")
    if args.write_runs:
        print(f"replays written under {args.write_runs}/<rule>/<recording>")


if __name__ == "__main__":
    run_main(main)
