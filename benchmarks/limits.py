"""Benchmarks against a rate-limited provider: every claim answered, the account at its limit.

Run: ``python -m benchmarks.limits`` (``make bench-limits``; about 25 minutes). The fake
OpenAI-compatible provider (``tests/fake_provider.py``) runs in a child process with a hosted
account's limits and faults: requests and tokens per minute (429 with ``Retry-After`` and the
``x-ratelimit-*`` headers), tokens charged as prompt + ``max_tokens`` at admission, lognormal
latency (median 0.8 s, tail to 8 s), 500s and requests that hang past the client's cut. Its
answers carry each claim's gold label (an oracle), so a run without faults scores 100% and
every item short of it is a fault that got through. ``factdebate bench`` runs in this process
through the real OpenAI client (``openai-compatible:MODEL@URL``), retrieval answered by fixed
documents and embeddings by hashes (what is measured is the provider traffic, not retrieval).

Printed per run: verdicts and coverage, accuracy over the answered items, the 429 share of
requests, requests and tokens per minute the provider admitted against its limits, and the
wall time over the ideal at the limits (the admitted requests and charged tokens at exactly
the limit, or the longest item's chain when that is longer).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

QUERY_MARK = "inside square brackets"
LATENCY_MEDIAN_S = 0.8
LATENCY_SIGMA = 0.75
"""Lognormal spread: about 1 request in 1,000 takes over 8 s, where the tail is cut."""
LATENCY_MAX_S = 8.0
BRACKETS = re.compile(r"[\[\]]")


@dataclass(frozen=True)
class Scenario:
    """One benchmark run: a method on fever-mini claims against an account's limits."""

    name: str
    method: str
    claims: int
    concurrency: int
    rpm: int
    tpm: int
    """Tokens per minute (0: no token limit)."""
    window_s: float
    """The limit's window: 60 = per minute, refilled continuously; 1 = the per-minute limit
    enforced per second (at most rpm/60 requests in any second)."""
    error_rate: float
    hang_rate: float


SCENARIOS = {
    "tool-mad": Scenario("Tool-MAD", "tool-mad", 200, 16, 300, 200_000, 60.0, 0.02, 0.005),
    "cot": Scenario("CoT", "cot", 500, 64, 600, 0, 1.0, 0.0, 0.0),
}


class Oracle:
    """Answers every prompt kind of Tool-MAD and CoT with the gold label of its claim."""

    def __init__(self, golds: dict[str, str]) -> None:
        self.golds = golds
        self.claims = sorted(golds, key=len, reverse=True)  # a longer claim may hold a shorter

    def claim_in(self, text: str) -> str:
        """The dataset claim the request is about ("" when none is named)."""
        return next((c for c in self.claims if c in text), "")

    def __call__(self, prompt: str, body: dict[str, Any]) -> str:
        """The answer to one request (its schema's name counts as prompt text)."""
        text = f"{prompt}\n{json.dumps(body.get('response_format') or {})}"
        claim = self.claim_in(text)
        if "AnswerRelevanceOutput" in text:  # the question written back is the claim itself
            return json.dumps({"question": claim, "noncommittal": 0})
        if "StatementGeneratorOutput" in text:
            return json.dumps({"statements": [f"The documents bear on the claim: {claim}"]})
        if "NLIStatementOutput" in text:
            verdict = {"statement": "The documents bear on the claim.", "reason": "stated"}
            return json.dumps({"statements": [{**verdict, "verdict": 1}]})
        if QUERY_MARK in text:
            return f"[{BRACKETS.sub('', claim)[:80]}]"
        label = self.golds.get(claim, "NOT ENOUGH INFO")
        return f"The documents bear on the claim: {claim}\n**{label}**"


def gold_labels(data_dir: Path | None) -> dict[str, str]:
    """fever-mini's claims (as a model reads them) and their gold labels."""
    from factdebate.bench.running.items import load_items

    items, _ = load_items("fever-mini", data_dir, None, 0)
    return {str(next(iter(item.text().values()))): str(item.gold) for item in items}


def _serve(scenario: Scenario, golds: dict[str, str], conn: Connection) -> None:
    """Child process: the rate-limited fake provider until told to stop, then its counters."""
    from tests.fake_provider import Behaviour, fake_provider

    behaviour = Behaviour(
        rpm=scenario.rpm,
        tpm=scenario.tpm,
        window_s=scenario.window_s,
        charge_cap=True,
        latency_median_s=LATENCY_MEDIAN_S,
        latency_sigma=LATENCY_SIGMA,
        latency_max_s=LATENCY_MAX_S,
        error_share=scenario.error_rate,
        hang_share=scenario.hang_rate,
        seed=0,
    )
    with fake_provider(Oracle(golds), honours_n=True, behaviour=behaviour) as provider:
        conn.send(provider.model("fake-limited"))
        conn.recv()
        with provider.lock:
            counts = dict(provider.counts)
            charged = sum(tokens for _, tokens in provider.charged)
        conn.send(
            {
                "requests": counts["received"],
                "admitted": counts["received"] - counts["limited"],
                "rate_limited": counts["limited"],
                "server_errors": counts["errors"],
                "hangs": counts["hangs"],
                "charged_tokens": charged,
            }
        )
    conn.close()


def run_scenario(
    scenario: Scenario, data_dir: Path | None, out: Path, told: bool = False
) -> dict[str, Any]:
    """Start the provider, bench the scenario's method into ``out``, return what was measured."""
    golds = gold_labels(data_dir)
    spawn = multiprocessing.get_context("spawn")
    parent, child = spawn.Pipe()
    server = spawn.Process(target=_serve, args=(scenario, golds, child), daemon=True)
    server.start()
    try:
        if not parent.poll(120):
            raise RuntimeError("the fake provider did not start within 120 s")
        model = parent.recv()
        started = time.perf_counter()
        metrics = _bench(scenario, model, data_dir, out, told)
        wall = time.perf_counter() - started
        parent.send("stop")
        counters: dict[str, Any] = parent.recv()
    finally:
        server.join(30)
        if server.is_alive():
            server.terminate()
    return {**measured(scenario, metrics, counters, wall), "told_limits": told}


def _bench(
    scenario: Scenario, model: str, data_dir: Path | None, out: Path, told: bool
) -> dict[str, Any]:
    """``factdebate bench``'s run of the scenario (fixed documents, hash embeddings).

    ``told``: the client is given the account's limits (``rpm``, ``tpm``) instead of learning
    them from the provider's headers.
    """
    from benchmarks.speed import fake_embeddings, fake_retrieval
    from factdebate.bench import run_bench

    context: dict[str, Any] = {"model": model, "collection": "bench_limits"}
    if told:
        context.update(rpm=scenario.rpm, tpm=scenario.tpm)
    with fake_retrieval(), fake_embeddings():
        return run_bench(
            scenario.method,
            "fever-mini",
            out,
            data_dir=data_dir,
            limit=scenario.claims,
            seed=0,
            concurrency=scenario.concurrency,
            context=context,
            pages=False,
        )


def measured(
    scenario: Scenario, metrics: dict[str, Any], counters: dict[str, Any], wall: float
) -> dict[str, Any]:
    """The figures of one run: verdicts, coverage, 429 share, rates against limits, wall/ideal."""
    requests = int(counters["requests"])
    admitted = int(counters["admitted"])
    charged = int(counters["charged_tokens"])
    by_tokens = 60.0 * charged / scenario.tpm if scenario.tpm else 0.0
    ideal = max(60.0 * admitted / scenario.rpm, by_tokens)
    chain = float(metrics["latency"]["max_s"])  # no run ends before its slowest item
    ideal = max(ideal, chain)
    minutes = wall / 60.0
    return {
        "scenario": scenario.name,
        "method": scenario.method,
        "claims": scenario.claims,
        "concurrency": scenario.concurrency,
        "rpm_limit": scenario.rpm,
        "tpm_limit": scenario.tpm,
        "window_s": scenario.window_s,
        "verdicts": int(metrics["answered"]),
        "coverage": float(metrics["coverage"]),
        "accuracy": float(metrics["accuracy"]),
        "failed": int(metrics["failed"]),
        "llm_calls": int(metrics["cost"]["llm_calls"]),
        "rejected": int(metrics["cost"].get("rejected", 0)),
        "requests": requests,
        "rate_limited": int(counters["rate_limited"]),
        "share_429": counters["rate_limited"] / max(1, requests),
        "server_errors": int(counters.get("server_errors", 0)),
        "hangs": int(counters.get("hangs", 0)),
        "rpm_achieved": admitted / minutes,
        "tpm_achieved": charged / minutes,
        "wall_s": wall,
        "ideal_s": ideal,
        "wall_over_ideal": wall / ideal if ideal else 0.0,
    }


def render(results: list[dict[str, Any]]) -> str:
    """The results as one markdown table."""
    lines = [
        "| run | verdicts | coverage | accuracy (answered) | requests | 429 share | "
        "requests/min (limit) | tokens/min (limit) | wall | ideal at the limits | wall / ideal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        per = "per second" if r["window_s"] < 60 else "per minute"
        token_limit = f"{r['tpm_limit']:,}" if r["tpm_limit"] else "none"
        run = (
            f"{r['scenario']}, {r['claims']} fever-mini claims, --concurrency {r['concurrency']}, "
            f"{r['rpm_limit']} RPM ({per})"
            + (f" / {token_limit} TPM" if r["tpm_limit"] else "")
            + (", limits set on the client" if r.get("told_limits") else "")
        )
        cells = [
            run,
            f"{r['verdicts']}/{r['claims']}",
            f"{100 * r['coverage']:.1f}%",
            f"{100 * r['accuracy']:.1f}%",
            f"{r['requests']:,}",
            f"{100 * r['share_429']:.1f}%",
            f"{r['rpm_achieved']:.0f} ({r['rpm_limit']})",
            f"{r['tpm_achieved']:,.0f} ({token_limit})",
            f"{r['wall_s'] / 60:.1f} min",
            f"{r['ideal_s'] / 60:.1f} min",
            f"{r['wall_over_ideal']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen scenarios, print the table (and the JSON when asked)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--only", choices=sorted(SCENARIOS), action="append", help="run only these (repeatable)"
    )
    parser.add_argument("--data-dir", type=Path, default=None, help="datasets root folder")
    parser.add_argument("--out", type=Path, default=None, help="keep the run folders here")
    parser.add_argument("--claims", type=int, default=None, help="fewer claims (a quick check)")
    parser.add_argument(
        "--set-limits",
        action="store_true",
        help="give the client the account's limits (--set rpm=... tpm=...) instead of letting it "
        "learn them from the provider's headers",
    )
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args(argv)
    if args.claims is not None and not 1 <= args.claims <= 500:
        parser.error("need 1 <= --claims <= 500")
    if args.out is not None and args.out.exists():
        parser.error(f"--out {args.out} exists: a resumed run would not measure the limits")
    names = args.only or list(SCENARIOS)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-limits-") as tmp:
        root = args.out or Path(tmp)
        for name in names:
            scenario = SCENARIOS[name]
            if args.claims is not None:
                scenario = replace(scenario, claims=min(args.claims, scenario.claims))
            results.append(run_scenario(scenario, args.data_dir, root / name, args.set_limits))
            print(render(results[-1:]), flush=True)
    print()
    print(render(results))
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
