"""Round two of hostile trials: no answer from failed agents, shared budgets, atomic rewrites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factdebate.graphs.madam_rag import graph as madam
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.state import MODEL_FAILURE
from tests.conftest import doc

QUESTION = "When was Michael Jordan born?"
DOCS = [
    doc("nba", "Michael Jeffrey Jordan, the basketball player, was born in 1963."),
    doc("prof", "Michael Irwin Jordan, the Berkeley professor, was born in 1956."),
]


class Status429(Exception):
    """Shaped like a provider's rate-limit error."""

    status_code = 429


class Status401(Exception):
    """Shaped like a provider's bad-key error."""

    status_code = 401


FAULTS: list[Any] = [
    RuntimeError("provider down"),
    Status429("Error code: 429 - rate limit"),
    Status401("Error code: 401 - invalid key"),
    "this is not JSON at all",
]


@pytest.mark.parametrize("fault", FAULTS, ids=["error", "429", "401", "malformed"])
async def test_madam_rag_with_every_call_failing_gives_no_answer(fault, scripted):
    name, model = scripted([("", fault)])
    context = MadamContext(model=name, model_retries=0, max_rounds=3)
    out = await madam.ainvoke({"question": QUESTION, "documents": DOCS}, context=context)
    assert out["verdict"] is None
    assert out["answers"] == []
    assert out["stop_reason"] == MODEL_FAILURE
    assert out["rounds"] == 1
    assert "no_agent_answers" in [e["kind"] for e in out["errors"]]
    assert model.calls_with("AnswerList") == 0  # the aggregator is never asked to invent one


async def test_madam_rag_with_every_call_hanging_gives_no_answer():
    from factdebate.tools.models.providers import register_model
    from tests.reliability.test_model_faults import HangingModel

    name = register_model("hanging-madam", HangingModel())
    context = MadamContext(model=name, model_retries=0, call_timeout_s=1)
    out = await madam.ainvoke({"question": QUESTION, "documents": DOCS}, context=context)
    assert (out["verdict"], out["stop_reason"]) == (None, MODEL_FAILURE)
    assert "timeout" in [e["kind"] for e in out["errors"]]


def test_bench_counts_a_madam_rag_item_whose_calls_all_failed_as_failed(tmp_path: Path, scripted):
    from factdebate.bench import load_items, read_results, run_bench
    from factdebate.datasets import DatasetError

    try:
        load_items("ramdocs", None, 2, 0)
    except DatasetError as exc:
        pytest.skip(f"RAMDocs not found: {exc}")
    name, _ = scripted([("", RuntimeError("provider down"))])
    metrics = run_bench(
        "madam-rag",
        "ramdocs",
        tmp_path / "run",
        data_dir=None,
        limit=2,
        seed=0,
        concurrency=2,
        context={"model": name, "max_rounds": 1, "model_retries": 0},
    )
    assert metrics["failed"] == 2
    assert metrics["unanswered"] == 2
    assert metrics["stop_reasons"] == {MODEL_FAILURE: 2}
    rows = read_results(tmp_path / "run" / "results.jsonl")
    assert [r["prediction"] for r in rows] == [None, None]


REWRITE_UNDER_A_FULL_DISK = """
import resource, signal, sys
import json
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from factdebate.bench import read_results
try:
    read_results(Path(sys.argv[1]))
except OSError as exc:
    print("write failed:", exc.errno)
"""


def test_a_failed_rewrite_of_results_keeps_every_finished_row(tmp_path: Path):
    """A disk that fills up while resume rewrites results.jsonl must not cost finished rows."""
    import json
    import subprocess
    import sys

    from factdebate.bench import read_results

    path = tmp_path / "results.jsonl"
    rows = [{"id": f"item-{i}", "prediction": "SUPPORTS", "note": "x" * 200} for i in range(40)]
    text = "".join(json.dumps(r) + "\n" for r in rows) + '{"id": "item-40", "predic'
    path.write_text(text, encoding="utf-8")  # a truncated last line forces the rewrite
    limit = len(text) // 2
    done = subprocess.run(
        [sys.executable, "-c", REWRITE_UNDER_A_FULL_DISK, str(path), str(limit)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert "write failed" in done.stdout, done.stdout + done.stderr
    assert [r["id"] for r in read_results(path)] == [r["id"] for r in rows]
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"], "a temp file was left"


def test_write_atomic_replaces_the_whole_file(tmp_path: Path):
    from factdebate.tools.core.files import write_atomic

    path = tmp_path / "sub" / "metrics.json"
    write_atomic(path, "first\n")
    write_atomic(path, b"second\n")
    assert path.read_bytes() == b"second\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["metrics.json"]


async def test_mad_fact_budget_bounds_the_whole_answer(scripted, fake_tools):
    """30 claims x 6 jurors once made 691 calls against 200: now claims and jurors share it."""
    import json

    from factdebate.bench.long_form import ascore_answer

    claims = [f"Claim number {i} is a fact." for i in range(30)]
    name, model = scripted(
        [
            ("You are the clerk of a fact-checking jury", json.dumps({"claims": claims})),
            ("how confident are you", "I know this.\nCONFIDENCE: 0.95"),
            ("Give your opinion on the claim", "Known.\n**TRUE**"),
        ]
    )
    out = await ascore_answer(
        " ".join(claims),
        model=name,
        merge_method="text",
        n_evaluators=6,
        max_rounds=2,
        claim_concurrency=4,
        max_llm_calls=80,
    )
    calls = out["cost"]["total"]["llm_calls"]
    assert calls == len(model.prompts)
    # one jury round is 12 calls, a whole jury 18: the overshoot is at most the juries that
    # were running (claim_concurrency of them) when the budget ran out
    assert calls <= 80 + 4 * 18, calls
    results = {c["claim_id"]: c for c in out["claims"]}
    assert sorted(results) == list(range(30))
    unchecked = [r for r in results.values() if r["rounds"] == 0]
    assert len(unchecked) >= 20 and all(r["verdict"] is None for r in unchecked)
    assert all(r["stop_reason"] == "budget_exhausted" for r in unchecked)
    cut_short = [r for r in results.values() if r["rounds"] == 1]
    assert cut_short and all(r["stop_reason"] == "budget_exhausted" for r in cut_short)
    assert out["stop_reason"] == "budget_exhausted"
    assert out["verdict"] is None
    budget = [e for e in out["errors"] if e["kind"] == "budget_exhausted"]
    left = [e for e in budget if "left unchecked" in e["message"]]
    assert len(left) == len(unchecked)


CLI_UNDER_A_MEMORY_LIMIT = """
import resource, sys
limit = 3 * 1024**3  # the old unbounded read ran into this instead of the machine's memory
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from factdebate.cli import app
app(sys.argv[1:])
"""


def run_cli_limited(args: list[str], stdin: Any = None) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c", CLI_UNDER_A_MEMORY_LIMIT, *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=Path(__file__).resolve().parents[2],
    )


def one_line_error(code: int, output: str, message: str) -> None:
    assert code == 2, output
    assert message in output, output
    assert "Traceback" not in output
    assert len(output.strip().splitlines()) <= 3, output


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_documents_from_dev_zero_are_refused_without_reading_them(tmp_path: Path):
    done = run_cli_limited(
        ["verify", "When was Jordan born?", "--method", "madam-rag", "--documents", "/dev/zero"]
    )
    one_line_error(done.returncode, done.stderr + done.stdout, "/dev/zero is not a regular file")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_a_claim_on_stdin_is_read_with_a_size_limit(tmp_path: Path):
    with open("/dev/zero", "rb") as zero:
        done = run_cli_limited(["verify", "-", "--method", "cot"], stdin=zero)
    one_line_error(done.returncode, done.stderr + done.stdout, "claim on stdin is over")


def test_score_answer_given_a_folder_gives_a_one_line_error(tmp_path: Path, scripted):
    from typer.testing import CliRunner

    from factdebate.cli import app

    name, model = scripted([])
    result = CliRunner().invoke(
        app, ["score-answer", "--answer-file", str(tmp_path), "--model", name]
    )
    one_line_error(result.exit_code, result.output, "is a folder; the answer file must be a file")
    assert model.prompts == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is a folder, not a SQLite file"),
        (b"these are not the pages of a database\n" * 20, "is not a SQLite database"),
        (b"SQLite format 3\x00" + b"\xff" * 2000, "checkpoint sqlite:"),
    ],
    ids=["folder", "not-sqlite", "damaged-sqlite"],
)
def test_a_bad_checkpoint_file_gives_a_one_line_error(content, message, tmp_path: Path, scripted):
    from typer.testing import CliRunner

    from factdebate.cli import app

    target = tmp_path / "checkpoints.db"
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    name, _ = scripted([])
    args = ["verify", "The sky is blue.", "--method", "cot", "--model", name]
    args += ["--thread", "t1", "--checkpoint", f"sqlite:{target}"]
    result = CliRunner().invoke(app, args)
    one_line_error(result.exit_code, result.output, message)


KEY = "sk-live-SECRET-echo-4242"


async def test_a_reply_echoing_a_key_is_redacted_in_the_transcript_and_bench_files(
    scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from factdebate.api import averify

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    name, _ = scripted([], default=f"My configuration says {KEY}.\n**SUPPORTS**")
    result = await averify("The sky is blue.", "cot", model=name)
    assert result["verdict"] == "SUPPORTS"
    text = json.dumps(result)
    assert KEY not in text
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
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    name, _ = scripted([], default=f"Key {KEY} in hand, no label.")  # parse_error keeps raw text
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
            assert KEY not in path.read_text(encoding="utf-8"), path.name
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
    import subprocess
    import sys

    env = {**os.environ, "LANGSMITH_API_KEY": KEY, "PYTHONWARNINGS": "always"}
    done = subprocess.run(
        [sys.executable, "-c", SDK_LOGS_A_KEY],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stderr + done.stdout
    assert done.stderr.count("[redacted]") == 3, done.stderr  # message, traceback, warning
