"""The debate-vs-vote suite on the 12 recorded Tool-MAD debates, replayed through the fake provider.

Runs ``factdebate.bench.running.suite_runs`` as ``bench --suite debate-vs-vote`` does, on a
fever-mini-shaped dataset of the 12 recorded FEVER claims
(../shared/recorded/tool-mad-2026-11-27.jsonl), with every model call answered by the
OpenAI-compatible fake provider of the test suite:

- Tool-MAD gets the recorded answer of each of its turns (tests/nodes/tool_mad/debates.py), and
  its retrieval tools the documents the recorded debater saw;
- CoT and every self-consistency sample get one of the capable model's recorded debater
  arguments for the same claim, taken in turn (debater A round 1, debater B round 1, A round 2,
  ...): real answers of that model to that claim, but written for the debate prompt;
- ReAct, MAD and MADKE are left out: nothing recorded answers their prompts.

So the page shows the suite's outputs and the costs of each method on the same claims; it
cannot show which method is more accurate (every answer comes from one recorded model that got
all 12 right). Prices: the recorded model's class, ``openai:gpt-4o-mini``, from the default
price table. Writes OUT/comparison.md and OUT/comparison.html (default OUT: runs/debate-vs-vote).
Run: .venv/bin/python -m benchmarks.debate_vs_vote [--out DIR] [--gate-profile NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import run_main  # noqa: E402
from factdebate.bench.judging.prices import DEFAULT_PRICES, load_prices  # noqa: E402
from factdebate.bench.judging.suite import SuitePlan, write_comparison  # noqa: E402
from factdebate.bench.running.matched import match_k  # noqa: E402
from factdebate.bench.running.runner import run_bench  # noqa: E402
from factdebate.bench.running.suite_runs import run_suite  # noqa: E402
from factdebate.tools import dispatch  # noqa: E402
from tests.fake_provider import fake_provider  # noqa: E402
from tests.nodes.tool_mad.debates import (  # noqa: E402
    DebateReplay,
    claim_line,
    claims,
    ragas_kind,
)

PLAN = SuitePlan("tool-mad", ("cot",), "self-consistency")
"""What the replay can answer: Tool-MAD, CoT and the matched self-consistency baseline."""
PRICED_AS = "openai:gpt-4o-mini"
"""The recorded model's class: its default price prices the replay."""


class SuiteReplay(DebateReplay):
    """The recorded debates for Tool-MAD; the recorded arguments, in turn, for single agents."""

    def __init__(self) -> None:
        super().__init__()
        self.arguments: dict[str, list[str]] = defaultdict(list)
        by_debater = {
            (claim, debater): answers
            for (kind, claim, debater), answers in self.turns.items()
            if kind == "debater-label"
        }
        for claim, _ in by_debater:
            a, b = (
                by_debater.get((claim, "debater_a"), []),
                by_debater.get((claim, "debater_b"), []),
            )
            for pair in zip(a, b, strict=False):
                self.arguments[claim].extend(pair)
        self.samples: Counter[str] = Counter()

    def __call__(self, prompt: str, body: dict[str, Any]) -> str:
        """A Tool-MAD call's recorded answer; a single agent's next recorded argument."""
        if "connection check" in prompt:  # the reachability probe before a run
            return "OK"
        if "fact-checking debate" in prompt or ragas_kind(prompt) is not None:  # Tool-MAD's
            return super().__call__(prompt, body)
        claim = claim_line(prompt)
        answers = self.arguments.get(claim)
        if not answers:
            self.missed.append(f"single agent: {claim[:120]}")
            return "(no recorded answer)"
        index = self.samples[claim]
        self.samples[claim] += 1
        return answers[index % len(answers)]


def write_dataset(root: Path) -> Path:
    """A fever-mini-shaped folder of the recorded claims, without gold documents (they retrieve)."""
    folder = root / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    doc = {"doc_id": "replay", "page": "Replay", "text": "The replay serves recorded documents."}
    (folder / "corpus.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    rows = [{"id": c.id, "claim": c.claim, "label": c.gold, "gold_doc_ids": []} for c in claims()]
    (folder / "claims.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    return root


def main() -> None:
    """Run the replayed suite and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/debate-vs-vote"))
    parser.add_argument("--gate-profile", default="", help="Tool-MAD gate profile (default: its)")
    args = parser.parse_args()
    replay = SuiteReplay()
    replay.install_tools()
    try:
        with tempfile.TemporaryDirectory() as tmp, fake_provider(replay) as provider:
            data = write_dataset(Path(tmp))
            context: dict[str, Any] = {"model": provider.model(), "current_date": "2026-11-27"}

            def run(method: str, folder: Path, settings: dict[str, Any]) -> None:
                if method == "tool-mad" and args.gate_profile:
                    settings = {**settings, "gate_profile": args.gate_profile}
                run_bench(
                    method,
                    "fever-mini",
                    folder,
                    data_dir=data,
                    limit=None,
                    seed=0,
                    concurrency=1,
                    context=settings,
                    pages=False,
                )

            def match(method: str, debate: Path, folder: Path, settings: dict[str, Any]) -> int:
                return int(match_k(method, debate, "calls", folder, settings)["k"])

            folders = run_suite(PLAN, args.out, context, run, match)
            prices = {**load_prices(), provider.model(): DEFAULT_PRICES[PRICED_AS]}
            print(write_comparison(args.out, folders, prices))
    finally:
        dispatch.override_tool("rag", None)
        dispatch.override_tool("search", None)
    if replay.missed:
        print(f"calls without a recorded answer: {len(replay.missed)}", file=sys.stderr)


if __name__ == "__main__":
    run_main(main)
