"""Dataset text: line separators inside JSONL rows, non-UTF-8 lines, reference texts, notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factdebate.cli import app
from tests.reliability.bench_cli import fever_mini, runner

pytestmark = pytest.mark.usefixtures("data_home")  # each test indexes (if at all) into its own home


def test_jsonl_lines_end_at_newline_only_and_medqa_ids_stay_right(tmp_path: Path) -> None:
    from factdebate.datasets import load_medqa

    def question(text: str, answer: str) -> dict[str, Any]:
        return {
            "question": text,
            "options": {"A": "one", "B": "two", "C": "three", "D": "four"},
            "answer_idx": answer,
        }

    rows = [
        question("First\u2028question with a line separator\u0085inside?", "A"),
        question("Second\u2029question?", "B"),
        question("Third question?", "C"),
    ]
    file = tmp_path / "test.jsonl"
    file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    loaded = load_medqa(file)
    assert loaded.issues == []
    gold = {i.id: i.label for i in loaded.items}
    assert len(gold) == 12
    assert (gold["0-A"], gold["1-B"], gold["2-C"]) == ("SUPPORTS", "SUPPORTS", "SUPPORTS")
    assert "\u2028" in loaded.items[0].claim


def test_a_non_utf8_line_is_reported_by_file_and_line_and_skipped(tmp_path: Path) -> None:
    from factdebate.bench import load_items

    root = fever_mini(tmp_path / "data")
    claims = root / "fever" / "fever_rag_mini" / "claims.jsonl"
    lines = claims.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"Claim number 1", b"Caf\xe9 claim")  # Latin-1, not UTF-8
    claims.write_bytes(b"\n".join(lines))
    issues: list[str] = []
    items, _ = load_items("fever-mini", root, None, 0, issues)
    assert [i.id for i in items] == ["0", "2"]
    assert issues == [f"{claims}:2: not valid UTF-8 (byte 0xe9 at column 24)"]


def test_bench_reads_a_results_row_holding_a_line_separator(tmp_path: Path) -> None:
    from factdebate.bench import read_results

    path = tmp_path / "results.jsonl"
    rows = [
        {"id": "1", "gold": "SUPPORTS", "errors": [{"raw": "a\u2028b"}]},
        {"id": "2", "gold": "REFUTES"},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    assert read_results(path) == rows


def test_felm_reference_contents_are_evidence(tmp_path: Path) -> None:
    from factdebate.bench import load_items

    record = {
        "index": 7,
        "domain": "wk",
        "prompt": "Who built it?",
        "response": "Eiffel built it. It is red.",
        "segmented_response": ["Eiffel built it.", "It is red."],
        "labels": [True, False],
        "ref": ["https://example.org/tower", "https://example.org/paint"],
        "ref_contents": ["The tower was built by Eiffel's company.", ""],
    }
    file = tmp_path / "all.jsonl"
    file.write_text(json.dumps(record) + "\n", encoding="utf-8")
    items, _ = load_items("felm-wk", file, None, 0)
    assert [i.id for i in items] == ["7-0", "7-1"]
    evidence = items[0].inputs["evidence"]
    assert [e["text"] for e in evidence] == ["The tower was built by Eiffel's company."]
    assert evidence[0]["title"] == "https://example.org/tower"


def test_hover_claim_only_note_is_shown_in_run_json_and_on_the_terminal(
    tmp_path: Path, scripted
) -> None:
    records = [
        {"uid": f"h{i}", "claim": f"Claim {i}.", "label": label, "supporting_facts": [["T", 0]]}
        for i, label in enumerate(("SUPPORTED", "NOT_SUPPORTED"))
    ]
    (tmp_path / "hover").mkdir()
    (tmp_path / "hover" / "dev.json").write_text(json.dumps(records), encoding="utf-8")
    name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    args = ["bench", "--out", str(out), "--method", "cot", "--dataset", "hover"]
    result = runner.invoke(app, [*args, "--data-dir", str(tmp_path), "--model", name])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    note = "hover: no wiki_wo_links.db beside the claims: claim-only (no evidence)"
    assert metrics["run"]["notes"] == [note]
    assert run["dataset"] == "hover"
    assert f"note: {note}" in result.output.replace("\n", " ")
    assert f"Note: {note}" in (out / "report.md").read_text(encoding="utf-8")
