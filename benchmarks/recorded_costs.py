"""Per-item model calls and tokens of each method, from the recorded capable-model runs.

Reads ../shared/recorded/capable-model-answers.jsonl (tokens estimated as characters / 4, as
the recording counts them) and prints one row per method: items, calls per item, input and
and output tokens per item.
Run: .venv/bin/python benchmarks/recorded_costs.py
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

RECORDED = Path(__file__).resolve().parents[2] / "shared" / "recorded"
ITEMS = {"tool-mad": 2, "debate-cv": 4, "madam-rag": 2, "mad-fact": 1}
"""Items in each recorded run (see the recording's README)."""


def main(path: Path = RECORDED / "capable-model-answers.jsonl") -> None:
    """Print the table."""
    if not path.is_file() or path.stat().st_size > 50_000_000:
        sys.exit(f"no readable recording at {path}")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        total = totals[row["method"]]
        total[0] += 1
        total[1] += math.ceil(len(row["prompt"]) / 4)
        total[2] += math.ceil(len(row["answer"]) / 4)
    print("| method | items | calls per item | input tokens per item | output tokens per item |")
    print("|---|---:|---:|---:|---:|")
    for method, (calls, tokens_in, tokens_out) in totals.items():
        n = ITEMS.get(method, 1)
        per_item = f"{calls / n:.0f} | {tokens_in / n:,.0f} | {tokens_out / n:,.0f}"
        print(f"| {method} | {n} | {per_item} |")


if __name__ == "__main__":
    main()
