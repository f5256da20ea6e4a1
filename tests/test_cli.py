"""The `factdebate` command: JSON contract, clear one-line errors, indexing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from tests.conftest import REPO

runner = CliRunner()


def cli(
    *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "factdebate.cli", *args],
        cwd=REPO,
        env=env,
        input=stdin,
        capture_output=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify", ""], "the claim is empty"),
        (["verify", "   "], "the claim is empty"),
        (["verify", "x" * 2001], "the limit is 2000"),
        (["verify", "A claim", "--method", "nope"], "unknown method 'nope'"),
        (["verify", "A claim", "--model", "nonsense"], "unknown model 'nonsense'"),
        (["verify", "A claim", "--set", "tool_b=bogus"], "setting tool_b must be rag, search"),
        (["verify", "A claim", "--set", "max_rounds=two"], "expects an integer"),
        (["verify", "A claim", "--collection", "never_built"], "no index named 'never_built'"),
        (["index", "/definitely/not/here"], "no such file or folder"),
    ],
)
def test_bad_input_gives_one_line_error(args, message, data_home):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 3  # one message, maybe wrapped


def test_invalid_utf8_on_stdin(data_home):
    result = runner.invoke(app, ["verify", "-"], input=b"\xff\xfe bad bytes")
    assert result.exit_code == 2 and "not valid UTF-8" in result.output


def test_index_jsonl_and_folder(tmp_path: Path, data_home):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "1", "title": "Moon", "text": "The Moon orbits Earth."}\n'
        '{"id": "2", "title": "Sun", "text": "The Sun is a star."}\n'
    )
    result = runner.invoke(app, ["index", str(corpus), "--collection", "mine"])
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents" in result.output
    assert "into 'mine': 2/2 documents (100%) · elapsed " in result.output  # no terminal: lines
    from factdebate.tools.retrieval.lexical_search import OfflineSearch
    from factdebate.tools.retrieval.vectorstore import dense_search

    assert dense_search("mine", "What orbits the Earth?", 1)[0]["id"] == "1"
    assert OfflineSearch("mine").search("star", 2)[0]["id"] == "2"
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("Water boils at 100 degrees Celsius at sea level.")
    (folder / "b.txt").write_text("")
    result = runner.invoke(app, ["index", str(folder), "--collection", "notes"])
    assert result.exit_code == 0 and "indexed 1 documents" in result.output


def test_index_reports_malformed_line(tmp_path: Path, data_home):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "title": "a", "text": "fine"}\n{"id": 2, "title": \n')
    result = runner.invoke(app, ["index", str(bad)])  # the valid record is indexed
    assert result.exit_code == 0 and f"skipped {bad}:2: not JSON" in result.output
    assert "skipped 1 bad record(s)" in result.output and "indexed 1 documents" in result.output


@pytest.mark.slow
def test_verify_json_on_embedded_default(tmp_path: Path):
    """End to end: real SmolLM2, MiniLM, Milvus Lite and BM25; one JSON object on stdout."""
    import os

    env = {**os.environ, "FACTDEBATE_HOME": str(tmp_path / "home"), "FACTDEBATE_MODEL": "local"}
    proc = cli(
        "verify",
        "The Eiffel Tower is located in Paris.",
        "--json",
        "--rounds",
        "1",
        "--set",
        "max_output_tokens=128",
        "--set",
        "relevance_strictness=1",
        env=env,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    result = json.loads(proc.stdout)
    from factdebate.api import CONTRACT_KEYS

    assert set(result) >= set(CONTRACT_KEYS)
    assert result["rounds"] == 1
    assert result["stop_reason"] in {"consensus", "round_limit"}
    assert result["verdict"] in {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO", None}
    if result["verdict"] is None:
        assert any(e["agent"] == "judge" for e in result["errors"])
    turns = result["transcript"]
    assert {t["agent"] for t in turns} == {"debater_a", "debater_b"}
    rag = next(t for t in turns if t["tool"] == "rag")
    search = next(t for t in turns if t["tool"] == "search")
    assert len(rag["evidence"]) == 3 and all(e["source"] == "hybrid" for e in rag["evidence"])
    assert all(e["source"] == "bm25" for e in search["evidence"])
    total = result["cost"]["total"]
    assert total["llm_calls"] >= 5 and total["input_tokens"] > 0 and total["output_tokens"] > 0


def test_bench_command_writes_report_and_compares(tmp_path: Path, data_home, scripted):
    from factdebate.datasets import datasets_root

    if not (datasets_root() / "fever").exists():
        pytest.skip(f"benchmark data not found at {datasets_root()}")
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = tmp_path / "run"
    args = [
        "bench",
        "--method",
        "cot",
        "--dataset",
        "fever-mini",
        "--limit",
        "4",
        "--model",
        name,
        "--out",
        str(run),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert {"results.jsonl", "metrics.json", "report.md"} <= {p.name for p in run.iterdir()}
    assert len((run / "results.jsonl").read_text().splitlines()) == 4
    # the report is echoed unwrapped (CliRunner is no terminal): each table line stays whole
    report = (run / "report.md").read_text()
    assert max(map(len, report.splitlines())) > 80
    assert all(line in result.output for line in report.splitlines() if line.startswith("|"))
    compared = runner.invoke(app, ["bench", "--compare", str(run), str(run)])
    assert compared.exit_code == 0 and "run" in compared.output
    bad = runner.invoke(app, ["bench", "--dataset", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "nope" in bad.output and "Traceback" not in bad.output


def test_documents_option_feeds_madam_rag(tmp_path: Path, data_home, scripted):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        '{"id": "d1", "title": "A", "text": "The capital is Paris."}\n'
        '{"id": "d2", "title": "B", "text": "The capital is Lyon."}\n'
    )
    name, _ = scripted(
        [
            ("AggregatorOutput", '{"answers": ["Paris"], "explanation": "d1 is reliable"}'),
        ],
        default='{"answer": "Paris", "explanation": "my document says so"}',
    )
    result = runner.invoke(
        app,
        [
            "verify",
            "What is the capital?",
            "--method",
            "madam-rag",
            "--documents",
            str(docs),
            "--model",
            name,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    agents = [t for t in payload["transcript"] if t.get("document_id")]
    assert {t["document_id"] for t in agents} == {"d1", "d2"}
    refused = runner.invoke(app, ["verify", "A claim", "--documents", str(docs)])
    assert refused.exit_code == 2 and "takes no documents" in refused.output


def test_score_answer_errors_are_one_line(tmp_path: Path, data_home):
    missing = runner.invoke(app, ["score-answer", "--answer-file", str(tmp_path / "none.txt")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n")
    result = runner.invoke(app, ["score-answer", "--answer-file", str(empty)])
    assert result.exit_code == 2 and "empty" in result.output
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    result = runner.invoke(app, ["score-answer", "--answer-file", str(binary)])
    assert result.exit_code == 2 and "UTF-8" in result.output


def test_score_answer_json(tmp_path: Path, data_home, scripted, fake_tools):
    answer = tmp_path / "answer.txt"
    answer.write_text("The Eiffel Tower is in Paris. You should visit it.")
    name, _ = scripted(
        [
            ("ClaimList", '{"claims": ["The Eiffel Tower is in Paris."]}'),
        ],
        default="It is in Paris.\n**TRUE**",
    )
    result = runner.invoke(
        app,
        [
            "score-answer",
            "--answer-file",
            str(answer),
            "--question",
            "Where is the Eiffel Tower?",
            "--model",
            name,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert [c["claim"] for c in payload["claims"]] == ["The Eiffel Tower is in Paris."]
    assert "precision" in payload["scores"]


def test_bench_pace_counts_only_items_finished_in_this_process():
    from factdebate.cli.progress import Pace

    now = [100.0]
    pace = Pace(clock=lambda: now[0])
    assert pace.update(5, 20) == "? items/min · ETA ?"  # resumed with 5 done
    now[0] += 120.0
    assert pace.update(7, 20) == "1.00 items/min · ETA 0:13:00"  # 2 new items in 2 min
    now[0] += 3480.0
    assert pace.update(8, 10) == "0.05 items/min · ETA 0:40:00"
    assert pace.update(10, 10).endswith("ETA 0:00:00")
