"""Secrets never leak: API keys are absent from results, errors, CLI output and bench files."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from factdebate.api import averify
from factdebate.tools import dispatch
from factdebate.tools.models import llm
from factdebate.tools.models.providers import register_model
from tests.conftest import REPO
from tests.fakes import ScriptedChatModel

OPENAI = "sk-test-SECRET-123"
TAVILY = "tvly-SECRET-456"
SECRETS = (OPENAI, TAVILY, "SECRET-123", "SECRET-456")
SHARED = REPO.parent / "shared" / "datasets"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY)

    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(llm, "_sleep", no_sleep)
    return {
        **os.environ,
        "OPENAI_API_KEY": OPENAI,
        "TAVILY_API_KEY": TAVILY,
        "PYTHONPATH": str(REPO),
    }


def test_redact_replaces_secret_env_values(keys):
    text = f"401 for key {OPENAI} and {TAVILY}; token {os.environ.get('HOME')}"
    cleaned = llm.redact(text)
    assert_clean(cleaned)
    assert cleaned.count("[redacted]") == 2


async def test_a_provider_error_quoting_the_key_is_recorded_redacted(keys, fake_tools):
    model = ScriptedChatModel(rules=[(lambda p: True, PermissionError(f"bad key {OPENAI}"))])
    name = register_model("leaky-provider", model)

    def leaky_search(query: str, k: int) -> list:
        raise RuntimeError(f"401 Unauthorized for api_key={TAVILY}")

    dispatch.override_tool("search", leaky_search)
    out = await averify(
        "The Eiffel Tower is in Paris.", "tool-mad", model=name, max_rounds=1, stability_score=False
    )
    dumped = json.dumps(out)
    assert_clean(dumped)
    kinds = {e["kind"] for e in out["errors"]}
    assert {"model_error", "tool_error"} <= kinds
    assert "[redacted]" in dumped


async def test_tool_mad_against_an_unreachable_provider_and_tavily(keys):
    model = f"openai-compatible:gpt-x@http://127.0.0.1:{closed_port()}/v1"
    out = await averify(
        "The Eiffel Tower is in Paris.",
        "tool-mad",
        model=model,
        max_rounds=1,
        stability_score=False,
        tool_a="none",
        tool_b="search",
        search_backend="tavily",
        call_timeout_s=10,
        model_retries=1,
    )
    assert_clean(json.dumps(out, default=str))
    kinds = {e["kind"] for e in out["errors"]}
    assert "model_error" in kinds
    assert kinds & {"tool_error", "timeout"}
    assert out["verdict"] is None and out["stop_reason"]


def test_cli_output_and_bench_files_hold_no_secret(keys, tmp_path: Path, data_home):
    model = f"openai-compatible:gpt-x@http://127.0.0.1:{closed_port()}/v1"
    common = [
        "--model",
        model,
        "--set",
        "tool_a=none",
        "--set",
        "tool_b=search",
        "--set",
        "search_backend=tavily",
        "--set",
        "stability_score=false",
        "--set",
        "model_retries=0",
        "--set",
        "call_timeout_s=10",
    ]
    env = {**keys, "FACTDEBATE_HOME": str(data_home)}
    verify = subprocess.run(
        [
            sys.executable,
            "-m",
            "factdebate.cli",
            "verify",
            "The Eiffel Tower is in Paris.",
            "--rounds",
            "1",
            *common,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert verify.returncode == 0, verify.stderr
    assert "recorded errors" in verify.stdout
    assert_clean(verify.stdout + verify.stderr)

    src = SHARED / "fever" / "fever_rag_mini"
    if not src.is_dir():
        pytest.skip("shared FEVER mini dataset absent")
    dst = tmp_path / "data" / "fever" / "fever_rag_mini"
    dst.mkdir(parents=True)
    shutil.copy(src / "corpus.jsonl", dst / "corpus.jsonl")
    first = (src / "claims.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (dst / "claims.jsonl").write_text(first + "\n", encoding="utf-8")
    out_dir = tmp_path / "run"
    bench = subprocess.run(
        [
            sys.executable,
            "-m",
            "factdebate.cli",
            "bench",
            "--out",
            str(out_dir),
            "--method",
            "tool-mad",
            "--dataset",
            "fever-mini",
            "--data-dir",
            str(tmp_path / "data"),
            "--set",
            "collection=default",
            "--set",
            "max_rounds=1",
            *common,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bench.returncode == 0, bench.stderr
    assert_clean(bench.stdout + bench.stderr)
    for name in ("results.jsonl", "report.md", "metrics.json"):
        assert_clean((out_dir / name).read_text(encoding="utf-8"))
    row = json.loads((out_dir / "results.jsonl").read_text().splitlines()[0])
    assert any(e["kind"] == "model_error" for e in row["errors"])


def test_redaction_follows_the_environment_as_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secret values are remembered per environment: a new, changed or removed key is seen."""
    from factdebate.tools.core.secrets import redact

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert redact(f"a {OPENAI} b") == f"a {OPENAI} b"
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    assert redact(f"a {OPENAI} b") == "a [redacted] b"
    monkeypatch.setenv("OPENAI_API_KEY", TAVILY)
    assert redact(f"{OPENAI} {TAVILY}") == f"{OPENAI} [redacted]"
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-987654")
    assert redact("x tok-987654 tvly") == "x [redacted] tvly"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert redact(TAVILY) == TAVILY
