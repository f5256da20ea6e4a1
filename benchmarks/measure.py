"""Measure per-claim time, LLM calls, tokens and peak memory of a method on the bundled claims.

Run: ``python -m benchmarks.measure [--method tool-mad] [--limit 5] [--set KEY=VALUE ...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from importlib import resources
from typing import Any

from factdebate.api import averify
from factdebate.cli.common import parse_settings
from factdebate.graphs.registry import load_method


def main() -> None:
    """Run the bundled example claims one after another and print a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", default="tool-mad")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--set", dest="settings", action="append", default=[])
    args = parser.parse_args()
    _, context_cls = load_method(args.method)
    settings = parse_settings(args.settings, context_cls)
    claims = json.loads(
        (resources.files("factdebate") / "data" / "example_claims.json").read_text()
    )
    rows: list[dict[str, Any]] = []
    for item in claims[: args.limit]:
        start = time.perf_counter()
        result = asyncio.run(averify(item["claim"], args.method, **settings))
        total = result["cost"].get("total", {})
        rows.append(
            {
                "claim": item["claim"],
                "gold": item["label"],
                "verdict": result["verdict"],
                "seconds": round(time.perf_counter() - start, 1),
                "rounds": result["rounds"],
                "stop_reason": result["stop_reason"],
                **total,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    summary = {
        "method": args.method,
        "settings": settings,
        "claims": len(rows),
        "mean_seconds": round(statistics.mean(r["seconds"] for r in rows), 1),
        "mean_llm_calls": round(statistics.mean(r["llm_calls"] for r in rows), 1),
        "mean_input_tokens": round(statistics.mean(r["input_tokens"] for r in rows)),
        "mean_output_tokens": round(statistics.mean(r["output_tokens"] for r in rows)),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
