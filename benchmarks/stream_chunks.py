"""What each stream mode carries for one claim on the embedded model, node by node.

Run: ``python -m benchmarks.stream_chunks`` (``--method``, ``--claim``, ``--max-output-tokens``).
Streams one debate with ``stream_mode=["messages", "updates"]`` and prints, per node, how many
``updates`` it sent, how many ``messages`` chunks with text, the characters they add up to,
the output tokens its update's cost reports, and seconds from the node's first chunk to its
update (the time a ``messages`` reader sees words before an ``updates`` reader sees anything).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from typing import Any

CLAIM = "The Eiffel Tower is in Paris."


async def measure(method: str, claim: str, max_output_tokens: int) -> dict[str, dict[str, Any]]:
    """Per node: updates, text chunks, characters, output tokens, seconds words came early."""
    from factdebate.api import build_context
    from factdebate.graphs.registry import load_method

    graph, _ = load_method(method)
    caps = {"max_output_tokens": max_output_tokens, "judge_max_output_tokens": max_output_tokens}
    context = build_context(method, model="local", max_rounds=1, **caps)
    rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"updates": 0, "chunks": 0, "chars": 0, "output_tokens": 0, "early_s": 0.0}
    )
    first: dict[str, float] = {}
    async for mode, part in graph.astream(
        {"claim": claim}, context=context, stream_mode=["messages", "updates"]
    ):
        now = time.perf_counter()
        if mode == "messages":
            chunk, meta = part
            node = str(meta.get("langgraph_node"))
            if chunk.content:
                first.setdefault(node, now)
                rows[node]["chunks"] += 1
                rows[node]["chars"] += len(str(chunk.content))
            continue
        for node, update in (part or {}).items():
            row = rows[node]
            row["updates"] += 1
            for cost in ((update or {}).get("cost") or {}).values():
                row["output_tokens"] += int(cost.get("output_tokens", 0))
            if node in first:
                row["early_s"] += round(now - first.pop(node), 2)
    return dict(rows)


def main(argv: list[str] | None = None) -> int:
    """Print the table, then the rows as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="mad")
    parser.add_argument("--claim", default=CLAIM)
    parser.add_argument("--max-output-tokens", type=int, default=128)
    args = parser.parse_args(argv)
    rows = asyncio.run(measure(args.method, args.claim, args.max_output_tokens))
    print(f"{'node':<24}{'updates':>8}{'chunks':>8}{'chars':>8}{'out tok':>9}{'early s':>9}")
    for node, row in rows.items():
        print(
            f"{node:<24}{row['updates']:>8}{row['chunks']:>8}{row['chars']:>8}"
            f"{row['output_tokens']:>9}{row['early_s']:>9.2f}"
        )
    print(json.dumps({"method": args.method, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
