"""The recorded capable-model answers (../shared/recorded), and what a person reads from them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).resolve().parents[2] / "shared" / "recorded"
ANSWERS = RECORDED / "capable-model-answers.jsonl"
MAX_BYTES = 20_000_000


def recorded(kind: str | None = None, method: str | None = None) -> list[dict[str, Any]]:
    """The recorded calls of ``kind``/``method``; skips the test when the file is absent."""
    if not ANSWERS.is_file():
        pytest.skip(f"recorded answers not found at {ANSWERS} (../shared is not beside the repo)")
    if ANSWERS.stat().st_size > MAX_BYTES:
        pytest.fail(f"{ANSWERS} is larger than {MAX_BYTES} bytes")
    rows = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines()]
    return [
        r
        for r in rows
        if (kind is None or r["kind"] == kind) and (method is None or r["method"] == method)
    ]


def bold_last_line(text: str) -> str:
    """What a person reads as the verdict: the bold word(s) on the last line."""
    last = [line for line in text.strip().splitlines() if line.strip()][-1]
    match = re.search(r"\*\*(.+?)\*\*", last)
    assert match, f"no bold verdict on the last line: {last!r}"
    return match.group(1).strip().upper()


def fenced_json(text: str) -> dict[str, Any]:
    """What a person reads as the JSON: the fenced block, decoded by the standard library."""
    match = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    body = match.group(1) if match else text
    value = json.loads(body)
    assert isinstance(value, dict)
    return value


DEBATES = RECORDED / "tool-mad-2026-11-27.jsonl"
DEBATE_RECORDINGS = {
    "2026-11-27": DEBATES,
    "2026-11-28": RECORDED / "tool-mad-2026-11-28.jsonl",
}
"""The recorded Tool-MAD debates by date (12 FEVER claims each; the 2026-11-23 answers are not
debates at today's prompts and stay out)."""


def recorded_debates(recordings: tuple[str, ...] = ("2026-11-27",)) -> list[dict[str, Any]]:
    """The recorded calls of the Tool-MAD debates of ``recordings``; skips when a file is absent."""
    rows: list[dict[str, Any]] = []
    for name in recordings:
        path = DEBATE_RECORDINGS[name]
        if not path.is_file():
            pytest.skip(f"recorded debates not found at {path} (../shared is not beside the repo)")
        if path.stat().st_size > MAX_BYTES:
            pytest.fail(f"{path} is larger than {MAX_BYTES} bytes")
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows
