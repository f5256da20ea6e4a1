"""Write factdebate/data/measured_costs.json: per-item calls and tokens by role, from recordings.

`bench --estimate` reads that table. Tool-MAD comes from the 12 debates recorded on
2026-11-27 with today's prompts (../shared/recorded/tool-mad-2026-11-27.jsonl), split by stop
reason; DebateCV, MADAM-RAG and MAD-Fact from the older recording of 2026-11-23
(capable-model-answers.jsonl, prompts as sent at commit 8d2b4ca). Tokens are characters / 4,
rounded up per call, as the recordings count them. ``item_tokens`` is what the means' items
held, counted as ``bench --estimate`` counts a dataset's (``item_lengths.item_lengths``): the mean
tokens of an item's claim, question or answer, and of the documents it shipped (null: none).
Run: .venv/bin/python benchmarks/measured_costs.py
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT.parent / "shared" / "recorded"
OUT = ROOT / "factdebate" / "data" / "measured_costs.json"
MAX_BYTES = 50_000_000
OLD_ITEMS = {"debate-cv": 4, "madam-rag": 2, "mad-fact": 1}
"""Items in each run of the older recording (its README)."""
ROLE_OF_KIND = {
    "query": "debater",
    "debater-label": "debater",
    "debater-argument": "debater",
    "juror-confidence": "debater",
    "juror-opinion": "debater",
    "judge-label": "judge",
    "moderator-json": "moderator",
    "document-agent-json": "agent",
    "aggregator-json": "aggregator",
    "clerk-claims": "clerk",
}
"""The cost role (as bench rows name it) of each recorded kind of call; ragas-* is the scorer."""
KEYS = ("llm_calls", "input_tokens", "output_tokens")


def _role(kind: str) -> str:
    return "scorer" if kind.startswith("ragas-") else ROLE_OF_KIND[kind]


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file() or path.stat().st_size > MAX_BYTES:
        sys.exit(f"no readable recording at {path}")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _means(rows: list[dict[str, Any]], items: int) -> dict[str, Any]:
    """Per-item means by role (and total) of the calls in ``rows`` over ``items`` items."""
    per_role: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        usage = {
            "llm_calls": 1,
            "input_tokens": math.ceil(len(row["prompt"]) / 4),
            "output_tokens": math.ceil(len(row["answer"]) / 4),
        }
        per_role[_role(row["kind"])].update(usage)
        per_role["total"].update(usage)
    return {
        "items": items,
        "per_role": {
            role: {k: round(c[k] / items, 1) for k in KEYS} for role, c in sorted(per_role.items())
        },
    }


TEXT_LINE = re.compile(r"^(?:Claim|Question): (.+)$", re.M)
ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)
EVIDENCE = re.compile(r'<evidence n="\d+" id="([^"]*)" title="([^"]*)">\n(.*?)\n</evidence>', re.S)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _item_tokens(texts: list[str], documents: list[dict[str, tuple[str, str]]]) -> dict[str, Any]:
    """Mean tokens of the items' texts and of the documents each shipped (ids to title, text)."""
    shipped = [
        sum(_tokens(title) + _tokens(text) for title, text in docs.values())
        for docs in documents
        if docs
    ]
    return {
        "text": round(sum(_tokens(t) for t in texts) / len(texts), 1),
        "documents": round(sum(shipped) / len(shipped), 1) if shipped else None,
    }


def _old_items(rows: list[dict[str, Any]], reads_documents: bool) -> dict[str, Any]:
    """The items behind a method's calls in the older recording, read from their prompts.

    MAD-Fact's item is the answer its clerk splits (jurors' prompts quote atomic claims).
    """
    texts: dict[str, str] = {}
    documents: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for row in rows:
        found = TEXT_LINE.search(row["prompt"])
        if found is None:
            continue
        key = found.group(1).strip()
        answer = ANSWER.search(row["prompt"])  # MAD-Fact: the answer it splits is the item
        texts.setdefault(key, key + ("\n" + answer.group(1) if answer else ""))
        if reads_documents:
            for ident, title, text in EVIDENCE.findall(row["prompt"]):
                documents[key].setdefault(ident, (title, text))
    return _item_tokens(list(texts.values()), [documents[k] for k in texts])


def main() -> None:
    """Compute the table and write it."""
    table: dict[str, Any] = {
        "about": "Mean LLM calls and tokens per item, by role, measured on recorded runs of a "
        "capable model (GPT-4o-mini class, temperature 0, paper defaults); tokens = characters "
        "/ 4. Written by benchmarks/measured_costs.py.",
        "command": ".venv/bin/python benchmarks/measured_costs.py",
        "methods": {},
    }
    tool_mad = _rows(RECORDED / "tool-mad-2026-11-27.jsonl")
    claims = {(r["run"], r["claim_id"]): r["stop_reason"] for r in tool_mad}
    entry = _means(tool_mad, len(claims))
    entry["source"] = (
        "12 Tool-MAD debates on fever-mini recorded 2026-11-27 at commit a9a4da1 "
        "(recording tool-mad-2026-11-27.jsonl, kept outside the repository)"
    )
    entry["settings"] = {"gate_profile": "paper"}  # the paper's thresholds, as recorded
    entry["item_tokens"] = _item_tokens(
        [next(r["claim"] for r in tool_mad if (r["run"], r["claim_id"]) == k) for k in claims], []
    )
    entry["by_stop_reason"] = {}
    for reason in sorted(set(claims.values())):
        keep = [r for r in tool_mad if claims[(r["run"], r["claim_id"])] == reason]
        n = sum(1 for v in claims.values() if v == reason)
        entry["by_stop_reason"][reason] = _means(keep, n)
    table["methods"]["tool-mad"] = entry
    old = _rows(RECORDED / "capable-model-answers.jsonl")
    for method, items in OLD_ITEMS.items():
        mine = [r for r in old if r["method"] == method]
        entry = _means(mine, items)
        quoting = [r for r in mine if method != "mad-fact" or r["kind"] == "clerk-claims"]
        entry["item_tokens"] = _old_items(quoting, method in ("debate-cv", "madam-rag"))
        entry["source"] = (
            f"{items} {method} item(s) recorded 2026-11-23 at commit 8d2b4ca, prompts as sent "
            "then (recording capable-model-answers.jsonl, kept outside the repository)"
        )
        table["methods"][method] = entry
    OUT.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
