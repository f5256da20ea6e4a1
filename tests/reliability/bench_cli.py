"""The command line on a small FEVER-mini dataset: a runner, bench arguments, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

runner = CliRunner()


def one_line_error(result: Any, message: str) -> None:
    output = result.output
    assert result.exit_code == 2, output
    assert message in output.replace("\n", " "), output
    assert "Traceback" not in output, output
    assert len(output.strip().splitlines()) <= 3, output


def fever_mini(root: Path, labels: tuple[str, ...] = ("SUPPORTS", "REFUTES", "SUPPORTS")) -> Path:
    """A small FEVER-mini dataset under ``root`` (claims with gold sentences); returns root."""
    folder = root / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    corpus = [{"doc_id": f"d{i}", "text": f"Fact number {i} holds.", "page": "P"} for i in range(3)]
    claims = [
        {"id": i, "claim": f"Claim number {i}.", "label": label, "gold_doc_ids": [f"d{i}"]}
        for i, label in enumerate(labels)
    ]
    for name, rows in (("corpus.jsonl", corpus), ("claims.jsonl", claims)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (folder / name).write_text(text, encoding="utf-8")
    return root


def bench_args(out: Path, data: Path, model: str, *extra: str) -> list[str]:
    return [
        "bench",
        "--out",
        str(out),
        "--method",
        "cot",
        "--dataset",
        "fever-mini",
        "--data-dir",
        str(data),
        "--model",
        model,
        *extra,
    ]
