"""`factdebate verify`: one-line errors for bad input, the JSON contract, given documents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from tests.bounded import MODEL_GUARD_S, run_bounded
from tests.conftest import REPO
from tests.reruns import differences, without_times

runner = CliRunner()


def cli(
    *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a child process, bounded by its work (rounds, token budget), not the clock."""
    return run_bounded(
        [sys.executable, "-m", "factdebate.cli", *args],
        what="factdebate " + " ".join(args[:1]),
        guard_s=MODEL_GUARD_S,
        cwd=REPO,
        env=env,
        input=stdin,
        capture_output=True,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify", ""], "the claim is empty"),
        (["verify", "   "], "the claim is empty"),
        (["verify", "x" * 2001], "the limit is 2000"),
        (["verify", "A claim", "--method", "nope"], "unknown method 'nope'"),
        (["verify", "A claim", "--model", "nonsense"], "unknown model 'nonsense'"),
        (["verify", "A claim", "--model", "nonsense:foo"], "use local, hf:, hf-local:, openai-"),
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


@pytest.mark.slow
def test_verify_json_on_embedded_default(tmp_path: Path):
    """End to end: real SmolLM2, MiniLM, Milvus Lite and BM25; one JSON object on stdout.

    Bounded by its work (one round, a 128-token cap), not the clock. Run twice, the same
    command gives the same result field by field, times aside: every sampled call (answers,
    relevance questions) is seeded.
    """
    import os

    env = {**os.environ, "FACTDEBATE_HOME": str(tmp_path / "home"), "FACTDEBATE_MODEL": "local"}
    args = ["verify", "The Eiffel Tower is located in Paris.", "--json", "--rounds", "1",
            "--set", "max_output_tokens=128", "--set", "relevance_strictness=1"]  # fmt: skip
    proc = cli(*args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    result = json.loads(proc.stdout)
    again = cli(*args, env=env)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert differences(without_times(result), without_times(json.loads(again.stdout))) == []
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
