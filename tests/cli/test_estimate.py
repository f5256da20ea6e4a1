"""`bench --estimate`: expected calls, tokens and USD before any call, fast and model-free."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.graphs.registry import METHODS
from tests.bounded import run_bounded

runner = CliRunner()
# Runs the command, then lists what of the graphs or a model stack got imported (none may).
PROBE = """
import sys
from factdebate.cli import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules
               if m.startswith(("langgraph", "factdebate.graphs.", "factdebate.tools.models",
                                "langchain_openai", "langchain_anthropic", "langchain_ollama",
                                "langchain_community", "llama_cpp", "openai", "anthropic",
                                "torch", "transformers"))
               and m != "factdebate.graphs.registry")  # the method catalog: no graph in it
print("HEAVY:", heavy)
sys.exit(code)
"""


def estimate(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``factdebate bench --estimate ARGS`` in a fresh interpreter; its result and seconds."""
    started = time.perf_counter()
    done = run_bounded(
        [sys.executable, "-c", PROBE, "bench", "--estimate", *args],
        what="bench --estimate",
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "COLUMNS": "200"},
    )
    return done, time.perf_counter() - started


def test_estimate_answers_without_loading_any_model():
    done, seconds = estimate(
        "--method", "tool-mad", "--dataset", "fever-mini", "--limit", "10",
        "--model", "openai:gpt-4o-mini", "--data-dir", "/nonexistent/datasets",
    )  # fmt: skip  # no dataset to read: the recorded means as they are
    assert done.returncode == 0, done.stderr
    print(f"estimate took {seconds:.2f} s")  # speed is measured by benchmarks/, not asserted
    assert "HEAVY: []" in done.stdout  # no graph, no model loader, no provider SDK: no call
    out = done.stdout
    assert "tool-mad on fever-mini, 10 item(s)" in out
    assert "28.5" in out and "285.0" in out  # calls per item and for the run (10 items)
    assert "$0.0591" in out  # 213,512 in at $0.15 + 45,058 out at $0.60 per million
    assert "Input tokens as measured: the items' lengths were not read" in out
    assert "consensus" in out and "round_limit" in out
    assert "no model was called" in out


def test_an_unpriced_model_says_so_and_a_method_without_runs_is_estimated_from_its_graph():
    done, _ = estimate("--method", "madam-rag", "--dataset", "ramdocs", "--limit", "3",
                       "--model", "openai-compatible:m@http://127.0.0.1:9/v1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "unpriced" in done.stdout and "$" not in done.stdout.split("Means from")[0]
    done, _ = estimate("--method", "mad", "--dataset", "fever-mini", "--limit", "3")
    assert done.returncode == 0, done.stderr
    assert "| per item | 9.0 |" in done.stdout  # 3 rounds of two sides and a judge
    assert "Means from its graph's structure, not a measured run" in done.stdout
    assert "HEAVY: []" in done.stdout


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_is_estimated_before_any_run(method: str, data_home: Path) -> None:
    """No run, no --estimate-from: calls and tokens from measured runs or the graph's structure."""
    result = runner.invoke(
        app, ["bench", "--estimate", "--method", method, "--dataset", "fever-mini", "--limit", "3"]
    )
    assert result.exit_code == 0, result.output
    assert f"# Estimate: {method} on fever-mini, 3 item(s)" in result.output
    assert "No time: no call of local was timed on this machine yet" in result.output


def test_a_local_estimate_gives_a_time_once_this_machine_timed_calls(data_home: Path) -> None:
    from factdebate.runs.pace import PaceBook, write_book

    book = PaceBook()
    for n in range(10):  # 0.01 s an input token, 0.1 s an output token
        book.add_call("local", "debater", 100 + n, 20, 0.01 * (100 + n) + 0.1 * 20)
    data_home.mkdir(parents=True, exist_ok=True)
    write_book(data_home, book)
    result = runner.invoke(
        app, ["bench", "--estimate", "--method", "cot", "--dataset", "fever-mini", "--limit", "10"]
    )
    assert result.exit_code == 0, result.output
    # cot: one call of about 749 tokens in and 158 out (tool-mad's mean call): 23.3 s an item
    assert "Expected time on local: 0:03:" in result.output


def earlier_run(
    folder: Path, method: str = "mad", dataset: str = "fever-mini", **context: object
) -> Path:
    """A finished run's metrics.json: 4 items, 20 calls (16 debater, 4 judge)."""
    folder.mkdir()
    metrics = {
        "n": 4,
        "task": "labels",
        "accuracy": 0.5,
        "run": {"method": method, "dataset": dataset, "context": context},
        "latency": {"mean_s": 1.0},
        "cost": {
            "llm_calls": 20,
            "input_tokens": 40_000,
            "output_tokens": 4_000,
            "per_item": {"llm_calls": 5.0, "input_tokens": 10_000.0, "output_tokens": 1_000.0},
            "per_role": {
                "debater": {"llm_calls": 16, "input_tokens": 30_000, "output_tokens": 3_000},
                "judge": {"llm_calls": 4, "input_tokens": 10_000, "output_tokens": 1_000},
            },
        },
    }
    (folder / "metrics.json").write_text(json.dumps(metrics), "utf-8")
    return folder


def test_estimate_reads_the_means_of_an_earlier_run(tmp_path: Path):
    run = earlier_run(tmp_path / "earlier")
    result = runner.invoke(
        app,
        ["bench", "--method", "mad", "--dataset", "fever-mini", "--limit", "100",
         "--estimate-from", str(run), "--model", "p:m", "--price", "p:m=1,10"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "5.0" in result.output and "500.0" in result.output  # calls per item, whole run
    # per item 10,000 in at $1 + 1,000 out at $10 per million = $0.02; 100 items: $2
    assert "$0.0200" in result.output and "$2.0000" in result.output
    assert "# Estimate: mad on fever-mini, 100 item(s)" in result.output
    repeated = runner.invoke(
        app,
        ["bench", "--method", "mad", "--dataset", "fever-mini", "--limit", "100", "--repeats",
         "3", "--estimate-from", str(run), "--model", "p:m", "--price", "p:m=1,10"],
    )  # fmt: skip
    assert repeated.exit_code == 0, repeated.output
    assert "x 3 repeats" in repeated.output and "1,500.0" in repeated.output  # 3 x 500 calls
    assert "$6.0000" in repeated.output


def test_estimate_from_another_methods_run_is_refused_or_titled_as_its_figures(tmp_path: Path):
    cot = earlier_run(tmp_path / "cot", method="cot")
    scifact = earlier_run(tmp_path / "scifact", dataset="scifact")
    args = ["bench", "--method", "mad", "--dataset", "fever-mini", "--limit", "10"]
    for run, theirs in ((cot, "a run of cot on fever-mini"), (scifact, "of mad on scifact")):
        result = runner.invoke(app, [*args, "--estimate-from", str(run)])
        assert result.exit_code == 2, result.output
        assert theirs in result.output and "not of mad on fever-mini" in result.output
        assert len(result.output.strip().splitlines()) == 1
    shown = runner.invoke(app, [*args, "--estimate-from", str(cot), "--estimate-any-source"])
    assert shown.exit_code == 0, shown.output
    title = shown.output.splitlines()[0]
    assert "cot's figures" in title and "not mad's" in title  # the method named in the title


def test_a_setting_that_changes_the_calls_is_refused_unless_the_means_ran_with_it(
    tmp_path: Path, data_home: Path
) -> None:  # an empty home: no runs of this machine's to learn means from
    base = [
        "bench",
        "--estimate",
        "--method",
        "tool-mad",
        "--dataset",
        "fever-mini",
        "--limit",
        "5",
    ]
    for setting in ("max_rounds=5", "gate_profile=auto"):  # measured: 3 rounds, gate paper
        result = runner.invoke(app, [*base, "--set", setting])
        assert result.exit_code == 2, result.output
        assert f"--set {setting} changes the calls" in result.output
    same = runner.invoke(app, [*base, "--set", "gate_profile=paper", "--set", "temperature=0.3"])
    assert same.exit_code == 0, same.output  # what was measured, and a setting of no calls
    run = earlier_run(tmp_path / "five", max_rounds=5)
    ran = runner.invoke(app, ["bench", "--method", "mad", "--dataset", "fever-mini", "--limit",
                              "5", "--set", "max_rounds=5", "--estimate-from", str(run)],
                        )  # fmt: skip
    assert ran.exit_code == 0, ran.output


def test_a_suite_estimate_covers_every_member_or_names_what_it_cannot(tmp_path: Path):
    base = ["bench", "--estimate", "--suite", "debate-vs-vote", "--method", "tool-mad",
            "--dataset", "fever-mini", "--limit", "10"]  # fmt: skip
    structural = runner.invoke(app, base)  # no member but tool-mad was measured: structures
    assert structural.exit_code == 0, structural.output
    assert "- mad: means from its graph's structure" in structural.output
    unshared = runner.invoke(app, [*base, "--set", "tool_a=search"])
    assert unshared.exit_code == 2 and "cot has no such setting" in unshared.output
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("tool-mad", "escalate-tool-mad", "cot", "react", "mad", "madke"):
        earlier_run(suite / name, method=name)
    earlier_run(suite / "self-consistency", method="self-consistency", k=5)  # 1 call/sample
    done = runner.invoke(app, [*base, "--estimate-from", str(suite), "--repeats", "2"])
    assert done.exit_code == 0, done.output
    # every member spent 5 calls per item; matched on calls, k = 5 (a sample: 1 call)
    assert "self-consistency (k = 5, matched on calls)" in done.output
    assert "| whole suite |" in done.output and "700" in done.output  # 7 runs x 10 x 2 x 5
    tokens = runner.invoke(app, [*base, "--estimate-from", str(suite), "--match-on", "tokens"])
    assert tokens.exit_code == 0, tokens.output
    # a sample: 11,000 / 5 = 2,200 tokens; the debate 11,000: k = 5, plus a 5-item pilot
    assert "k = 5, matched on tokens" in tokens.output and "pilot (k = 1)" in tokens.output


def test_bad_estimate_options_are_one_line_refusals(tmp_path: Path):
    for args, wanted in (
        (["--price", "p:m=1"], "MODEL=IN,OUT"),
        (["--limit", "0"], "--limit"),
        (["--estimate-from", str(tmp_path / "none")], "none"),
    ):
        result = runner.invoke(
            app, ["bench", "--estimate", "--method", "tool-mad", "--dataset", "fever-mini", *args]
        )
        assert result.exit_code == 2, (args, result.output)
        assert wanted in result.output and "Traceback" not in result.output


def test_a_whole_dataset_is_counted_or_a_limit_asked_for(tmp_path: Path):
    result = runner.invoke(
        app,
        ["bench", "--estimate", "--method", "debate-cv", "--dataset", "averitec",
         "--data-dir", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 2 and "pass --limit N" in result.output
