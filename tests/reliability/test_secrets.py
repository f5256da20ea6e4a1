"""Secrets never leak: keys from the environment or a model URL stay out of every output and log."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest

from factdebate.api import averify
from factdebate.cli import app
from factdebate.tools import dispatch
from factdebate.tools.models import llm
from factdebate.tools.models.providers import register_model
from tests.bounded import COMMAND_GUARD_S, MODEL_GUARD_S, run_bounded
from tests.conftest import REPO
from tests.fakes import ScriptedChatModel
from tests.reliability.bench_cli import bench_args, fever_mini, runner

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
    from tests.fake_provider import fake_provider

    # Every model call fails with a 500 (a closed port is now refused before the run starts).
    with fake_provider(lambda prompt, body: "", status=500) as provider:
        _no_secret_in_failed_runs(provider.model("gpt-x"), keys, tmp_path, data_home)


def _no_secret_in_failed_runs(
    model: str, keys: dict[str, str], tmp_path: Path, data_home: Path
) -> None:
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
    verify = run_bounded(
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
        what="the CLI child",
        guard_s=MODEL_GUARD_S,
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
    bench = run_bounded(
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
        what="the CLI child",
        guard_s=MODEL_GUARD_S,
    )
    assert bench.returncode == 3, bench.stderr  # its one item failed: no reply from the model
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


URL_KEY = "sk-url-SECRET-9876"


@pytest.mark.usefixtures("data_home")
@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "openai-compatible:m@http://user:KEY1234@host/v1",
            "openai-compatible:m@http://user:[redacted]@host/v1",
        ),
        ("https://TOKEN1234@git.example/x", "https://[redacted]@git.example/x"),
        ("http://h/v1?api_key=KEY1234&design=1", "http://h/v1?api_key=[redacted]&design=1"),
        (
            "https://h/x?X-Amz-Signature=abc&token=t",
            "https://h/x?X-Amz-Signature=[redacted]&token=[redacted]",
        ),
        (
            "mail me at a@b.example, see http://h:8080/v1",
            "mail me at a@b.example, see http://h:8080/v1",
        ),
    ],
)
def test_redact_removes_credentials_from_urls(text: str, shown: str) -> None:
    from factdebate.tools.core.secrets import redact

    assert redact(text) == shown


@pytest.mark.usefixtures("data_home")
def test_a_key_in_a_model_url_reaches_no_bench_file_and_no_terminal(tmp_path: Path) -> None:
    from tests.fake_provider import fake_provider

    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        model = provider.model("m").replace("http://", f"http://user:{URL_KEY}@")
        out = tmp_path / "run"
        result = runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), model))
    assert result.exit_code == 0, result.output
    assert provider.requests, "the run reached the model"
    assert URL_KEY not in result.output
    text_files = (".json", ".jsonl", ".md", ".html")  # images and Parquet hold no settings
    written = [p for p in out.rglob("*") if p.is_file() and p.suffix in text_files]
    assert {"run.json", "report.md", "metrics.json", "report.html"} <= {p.name for p in written}
    for path in written:
        assert URL_KEY not in path.read_text(encoding="utf-8"), path.name
    assert "user:[redacted]@" in (out / "run.json").read_text(encoding="utf-8")


@pytest.mark.usefixtures("data_home")
def test_verify_shows_no_key_from_a_model_url(tmp_path: Path) -> None:
    from tests.fake_provider import fake_provider

    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        model = provider.model("m").replace("http://", f"http://user:{URL_KEY}@")
        page = tmp_path / "debate.html"
        result = runner.invoke(
            app,
            [
                "verify",
                "The sky is blue.",
                "--method",
                "cot",
                "--model",
                model,
                "--html",
                str(page),
            ],
        )
    assert result.exit_code == 0, result.output
    assert URL_KEY not in result.output and URL_KEY not in page.read_text(encoding="utf-8")


@pytest.mark.usefixtures("data_home")
def test_gen_answers_writes_no_key_from_a_model_url(tmp_path: Path) -> None:
    import asyncio

    from factdebate.bench.running.long_form import agen_answers
    from factdebate.datasets import PromptItem
    from tests.fake_provider import fake_provider

    with fake_provider(lambda prompt, body: "A long answer.") as provider:
        model = provider.model("m").replace("http://", f"http://user:{URL_KEY}@")
        out = tmp_path / "answers"
        summary = asyncio.run(
            agen_answers(
                [PromptItem("p-1", "Tell me about towers.")],
                out,
                model=model,
                dataset="longfact",
                concurrency=1,
                max_output_tokens=64,
                timeout=30.0,
            )
        )
    assert summary["new"] == 1, summary
    for path in out.iterdir():
        assert URL_KEY not in path.read_text(encoding="utf-8"), path.name


ECHOED_KEY = "sk-live-SECRET-echo-4242"


async def test_a_reply_echoing_a_key_is_redacted_in_the_transcript_and_bench_files(
    scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from factdebate.api import averify

    monkeypatch.setenv("OPENAI_API_KEY", ECHOED_KEY)
    name, _ = scripted([], default=f"My configuration says {ECHOED_KEY}.\n**SUPPORTS**")
    result = await averify("The sky is blue.", "cot", model=name)
    assert result["verdict"] == "SUPPORTS"
    text = json.dumps(result)
    assert ECHOED_KEY not in text
    assert "[redacted]" in result["transcript"][0]["answer"]


def test_bench_files_hold_no_key_echoed_by_a_model(
    scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from factdebate.bench import load_items, run_bench
    from factdebate.datasets import DatasetError

    try:
        load_items("fever-mini", None, 2, 0)
    except DatasetError as exc:
        pytest.skip(f"FEVER mini not found: {exc}")
    monkeypatch.setenv("OPENAI_API_KEY", ECHOED_KEY)
    # a parse_error keeps the raw text
    name, _ = scripted([], default=f"Key {ECHOED_KEY} in hand, no label.")
    out = tmp_path / "run"
    run_bench(
        "cot",
        "fever-mini",
        out,
        data_dir=None,
        limit=2,
        seed=0,
        concurrency=1,
        context={"model": name},
    )
    for path in out.iterdir():
        if path.suffix in (".jsonl", ".json", ".md"):
            assert ECHOED_KEY not in path.read_text(encoding="utf-8"), path.name
    rows = (out / "results.jsonl").read_text(encoding="utf-8")
    assert "[redacted] in hand" in rows  # the raw reply is kept, the key is not


SDK_LOGS_A_KEY = """
import logging, os, warnings
key = os.environ["LANGSMITH_API_KEY"]
logging.basicConfig()
from tests.fakes import ScriptedChatModel
from factdebate.tools.models.providers import resolve_model
resolve_model(ScriptedChatModel())  # any model set-up installs the filters
logging.getLogger("langsmith.client").warning("Failed to batch ingest runs: key %s", key)
try:
    raise RuntimeError("401 for key " + key)
except RuntimeError:
    logging.getLogger("langsmith._internal._background_thread").exception("tracing queue")
warnings.warn("API key " + key + " is not valid for this endpoint")
"""


def test_langsmith_sdk_logs_and_warnings_are_redacted():
    import os
    import sys

    env = {**os.environ, "LANGSMITH_API_KEY": ECHOED_KEY, "PYTHONWARNINGS": "always"}
    done = run_bounded(
        [sys.executable, "-c", SDK_LOGS_A_KEY],
        capture_output=True,
        text=True,
        what="the CLI child",
        guard_s=COMMAND_GUARD_S,
        env=env,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert ECHOED_KEY not in done.stderr + done.stdout
    assert done.stderr.count("[redacted]") == 3, done.stderr  # message, traceback, warning
