"""Settings on the command line: `factdebate settings`, fast typed refusals, did-you-mean."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from dataclasses import MISSING, fields

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.graphs.registry import METHODS, load_method
from factdebate.settings import (
    GROUPS,
    context_class,
    did_you_mean,
    group_of,
)
from tests.bounded import run_bounded
from tests.conftest import REPO

runner = CliRunner()
HEAVY = {
    "torch",
    "langgraph",
    "langchain_core",
    "ragas",
    "llama_cpp",
    "sentence_transformers",
    "transformers",
    "pymilvus",
}
"""The stack a refusal must not wait for (each costs seconds to import)."""
PROBE = """
import json, sys
from factdebate.cli import main
heavy = set(json.loads(sys.argv[2]))
sys.argv = ["factdebate", *json.loads(sys.argv[1])]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
loaded = sorted({name.split(".")[0] for name in sys.modules} & heavy)
unneeded = [name for name in ("typer.rich_utils", "asyncio") if name in sys.modules]
probe = {"code": code, "heavy": loaded, "unneeded": unneeded}
sys.stderr.write("\\nPROBE " + json.dumps(probe) + "\\n")
"""


def _default(f: object) -> object:
    default = getattr(f, "default", MISSING)
    return getattr(f, "default_factory", list)() if default is MISSING else default


@pytest.mark.parametrize("method", sorted(METHODS))
def test_light_settings_class_is_the_graphs_own(method: str) -> None:
    """The class the CLI checks before importing a graph has the graph's fields and defaults."""
    light = context_class(method)
    _, real = load_method(method)
    assert light.__name__ == real.__name__
    assert [(f.name, _default(f)) for f in fields(light)] == [
        (f.name, _default(f)) for f in fields(real)
    ]
    assert light is real  # the graph takes the class its catalog entry names


@pytest.mark.parametrize("method", sorted(METHODS))
def test_settings_command_lists_every_field(method: str) -> None:
    _, real = load_method(method)
    names = [f.name for f in fields(real)]
    shown = runner.invoke(app, ["settings", method, "--json"])
    assert shown.exit_code == 0, shown.output
    payload = json.loads(shown.stdout)
    assert payload["method"] == method and payload["context"] == real.__name__
    assert [s["name"] for s in payload["settings"]] == names
    assert all(s["group"] in GROUPS for s in payload["settings"])
    text = runner.invoke(app, ["settings", method])
    assert text.exit_code == 0, text.output
    listed = {line.split()[0] for line in text.stdout.splitlines() if line.startswith("  ")}
    assert listed >= set(names)


def test_every_setting_of_every_method_has_a_group() -> None:
    ungrouped = sorted(
        {f.name for m in METHODS for f in fields(load_method(m)[1]) if group_of(f.name) is None}
    )
    assert ungrouped == [], f"add these to factdebate/settings.py groups: {ungrouped}"


def test_settings_json_shows_type_default_range_and_group() -> None:
    shown = json.loads(runner.invoke(app, ["settings", "tool-mad-rag-rag", "--json"]).stdout)
    by_name = {s["name"]: s for s in shown["settings"]}
    assert by_name["max_rounds"] == {
        "name": "max_rounds",
        "group": "rounds and stopping",
        "type": "int",
        "default": 3,
        "range": "1..20",
        "description": "Debate round limit T.",
    }
    assert by_name["tool_b"]["default"] == "rag"  # the ablation's own default, not Tool-MAD's
    assert by_name["tool_b"]["type"] == "rag | search | none"
    assert by_name["max_usd"]["group"] == "budgets"
    assert by_name["max_total_tokens"]["range"] == "0..1000000000"


def test_settings_text_is_grouped_in_order() -> None:
    text = runner.invoke(app, ["settings", "tool-mad"]).stdout
    order = [g.capitalize() for g in GROUPS]
    headings = [line for line in text.splitlines() if line in order]
    assert headings == order  # Tool-MAD has a setting in every group, shown in this order
    assert text.index("Budgets") < text.index("  max_llm_calls") < text.index("Output")


def test_settings_of_an_unknown_method_suggests_the_closest() -> None:
    result = runner.invoke(app, ["settings", "madamrag"])
    assert result.exit_code == 2
    assert "unknown method 'madamrag'. Did you mean madam-rag" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--set", "max_roundz=2"],
            "unknown setting 'max_roundz' for tool-mad. Did you mean max_rounds",
        ),
        (["--set", "topk=2"], "Did you mean top_k or top_p?"),
        (["--method", "tool-madd"], "unknown method 'tool-madd'. Did you mean tool-mad,"),
        (["--method", "mad-fact"], "mad-fact checks a long answer: use `factdebate score-answer`"),
        (["--rounds", "0"], "--rounds must be within 1..20, got 0"),
        (["--rounds", "21"], "--rounds must be within 1..20, got 21"),
        (["--collection", "x" * 1001], "--collection is 1001 characters; the limit is 1000"),
        (["--set", "max_rounds=0"], "setting max_rounds must be within 1..20, got 0"),
        (["--set", "max_rounds=two"], "--set max_rounds expects an integer, got 'two'"),
        (["--set", "judge_each_round=maybe"], "unknown setting 'judge_each_round' for tool-mad"),
        (["--set", "nokey"], "bad --set 'nokey': expected KEY=VALUE"),
    ],
)
def test_verify_refuses_with_the_option_typed(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["verify", "A claim", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    if args[0] == "--rounds":
        assert "max_rounds" not in result.output  # the user typed --rounds
    assert "Traceback" not in result.output


def test_list_settings_take_comma_separated_values() -> None:
    from factdebate.settings import parse_settings

    cls = context_class("mad-fact")
    parsed = parse_settings(["roles=a, b,", "n_evaluators=2"], cls, "mad-fact")
    assert parsed == {"roles": ["a", "b"], "n_evaluators": 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "cott"], "unknown method 'cott'. Did you mean cot?"),
        (["--dataset", "fevr-mini"], "unknown dataset 'fevr-mini'. Did you mean fever-mini?"),
        (["--set", "max_rounds=0"], "setting max_rounds must be within 1..20"),
        (["--set", "temprature=0.5"], "Did you mean temperature"),
    ],
)
def test_bench_refuses_names_before_running(tmp_path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["bench", "--out", str(tmp_path / "run"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "run").exists()


def test_did_you_mean_is_empty_without_a_close_name() -> None:
    assert did_you_mean("zzzz", ["tool-mad", "cot"]) == ""
    assert did_you_mean("cot", ["cot"]) == " Did you mean cot?"


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "A claim", "--set", "max_roundz=2"],
        ["verify", "A claim", "--method", "tool-madd"],
        ["verify", "A claim", "--rounds", "0"],
        ["bench", "--method", "cott", "--out", "unused"],
    ],
)
def test_refusal_loads_no_heavy_stack(args: list[str]) -> None:
    """A typo is refused before LangGraph, LangChain, torch or llama.cpp load.

    What bounds the refusal is the work: no heavy module is imported. Its time is printed here
    and measured by ``benchmarks/cli_refusal.py``; no assertion depends on the machine's speed.
    """
    env = {**os.environ, "FACTDEBATE_HOME": "/nonexistent-factdebate-home"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = run_bounded(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(sorted(HEAVY))],
        what="a refusal",
        cwd=REPO,
        env=env,
        capture_output=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stderr = proc.stderr.decode()
    probe = json.loads(stderr.rsplit("PROBE ", 1)[1])
    print(f"{' '.join(args)}: cpu {cpu:.2f} s, wall {wall:.2f} s")
    assert probe["code"] == 2 and "error:" in stderr, stderr
    assert probe["heavy"] == [], f"loaded before refusing: {probe['heavy']}"
    assert probe["unneeded"] == [], "a refusal needs neither help screens nor asyncio"


def test_bench_count_options_are_checked_before_the_imports(tmp_path) -> None:
    from factdebate.api import MAX_CONCURRENCY
    from factdebate.settings import MAX_CONCURRENCY as LIGHT_MAX

    assert LIGHT_MAX == MAX_CONCURRENCY
    for args, message in [
        (["--concurrency", "0"], "--concurrency must be within 1..64, got 0"),
        (["--concurrency", "65"], "--concurrency must be within 1..64, got 65"),
        (["--limit", "0"], "--limit must be at least 1, got 0"),
    ]:
        result = runner.invoke(app, ["bench", "--out", str(tmp_path / "run"), *args])
        assert result.exit_code == 2 and message in result.output, result.output


def test_api_and_server_settings_suggest_the_closest_name_too() -> None:
    """The settings class itself (API, graphs, LangGraph server) names the likely setting."""
    cls = context_class("tool-mad")
    with pytest.raises(ValueError) as caught:
        cls(max_roundz=2, zzz=1)
    assert str(caught.value) == (
        "unknown setting(s) for ToolMADContext: max_roundz, zzz (max_roundz: did you mean "
        "max_rounds?)"
    )
