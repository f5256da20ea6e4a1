"""Settings: every numeric setting bounded and typed in one place, for CLI, API and graphs."""

from __future__ import annotations

import asyncio
import math
from dataclasses import fields
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.api import build_context, verify
from factdebate.cli import app
from factdebate.graphs.registry import METHODS, load_method
from factdebate.nodes.context import Context

runner = CliRunner()

HOSTILE = [
    ("top_k=1000000000", "setting top_k must be within 1..100"),
    ("max_doc_chars=-1", "setting max_doc_chars must be within 50..50000"),
    ("temperature=nan", "setting temperature must be a finite number"),
    ("temperature=2.5", "setting temperature must be within 0..2"),
    ("call_timeout_s=0", "setting call_timeout_s must be within 0.01..3600"),
    ("max_llm_calls=-5", "setting max_llm_calls must be within 0..100000"),
    ("max_rounds=1000000", "setting max_rounds must be within 1..20"),
]


def all_contexts() -> list[type[Context]]:
    return [load_method(name)[1] for name in METHODS]


def test_every_numeric_setting_of_every_method_has_documented_bounds():
    for cls in all_contexts():
        for f in fields(cls):
            default = getattr(cls(), f.name)
            if isinstance(default, bool) or not isinstance(default, int | float):
                continue
            lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
            assert lo is not None and hi is not None, f"{cls.__name__}.{f.name} is unbounded"
            assert lo <= default <= hi, f"{cls.__name__}.{f.name} default outside its bounds"
            assert f"Range {lo:g}..{hi:g}" in f.metadata["description"], f.name


@pytest.mark.parametrize(("pair", "message"), HOSTILE)
def test_cli_rejects_out_of_bounds_settings_before_any_model_call(pair, message, scripted):
    name, model = scripted([])
    result = runner.invoke(
        app, ["verify", "The sky is blue.", "--model", name, "--method", "tool-mad", "--set", pair]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert model.prompts == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_rounds": "abc"}, "setting max_rounds must be an integer, got 'abc'"),
        ({"top_k": 2.5}, "setting top_k must be an integer"),
        ({"temperature": math.inf}, "setting temperature must be a finite number"),
        ({"stability_score": "yes"}, "setting stability_score must be true or false"),
        ({"tool_a": "shell"}, "setting tool_a must be rag, search or none"),
        ({"model": "x" * 5000}, "setting model is 5000 characters"),
        ({"bogus": 1}, "unknown setting(s) for ToolMADContext: bogus"),
    ],
)
def test_api_gives_a_clear_value_error_for_bad_settings(settings, message, scripted):
    name, model = scripted([])
    with pytest.raises(ValueError) as caught:
        verify("The sky is blue.", "tool-mad", **{"model": name, **settings})
    assert message in str(caught.value)
    assert model.prompts == []


async def test_graph_given_a_dict_context_with_a_bad_type_raises_a_value_error(scripted):
    """The server and ``graph.ainvoke(context={...})`` both build the dataclass from a dict."""
    from factdebate.graphs.tool_mad import graph

    name, model = scripted([])
    context: dict[str, Any] = {"model": name, "max_rounds": "abc"}
    with pytest.raises(ValueError, match="setting max_rounds must be an integer"):
        await graph.ainvoke({"claim": "The sky is blue."}, context=context)
    assert model.prompts == []
    with pytest.raises(ValueError, match="unknown setting"):  # not a TypeError
        await graph.ainvoke({"claim": "The sky is blue."}, context={"model": name, "bogus": 1})
    assert model.prompts == []


def test_settings_from_a_mapping_reject_unknown_names_and_convert_json_numbers():
    ctx = build_context("mad-fact", max_rounds=3.0, confidence_threshold=1)
    assert ctx.max_rounds == 3 and isinstance(ctx.max_rounds, int)
    assert isinstance(ctx.confidence_threshold, float)
    with pytest.raises(ValueError, match="unknown setting"):
        load_method("debate-cv")[1].from_settings({"voters": 3})


def test_cli_set_reads_a_list_setting_as_comma_separated_and_checks_it(scripted, tmp_path):
    name, model = scripted([])
    answer = tmp_path / "a.txt"
    answer.write_text("Paris is in France.")
    result = runner.invoke(
        app,
        ["score-answer", "--answer-file", str(answer), "--model", name, "--set", "roles=critic"],
    )
    assert result.exit_code == 2, result.output
    assert "roles must be n_evaluators distinct names" in result.output  # one name, 3 jurors
    assert model.prompts == []


@pytest.mark.parametrize("concurrency", [0, 65, 10**6])
def test_batch_concurrency_is_bounded_for_bench_and_syndec(concurrency, tmp_path):
    from factdebate.bench import run_bench
    from factdebate.training.syndec import run_syndec

    with pytest.raises(ValueError, match="concurrency must be within 1..64"):
        run_bench(
            "cot",
            "fever-mini",
            tmp_path,
            data_dir=None,
            limit=1,
            seed=0,
            concurrency=concurrency,
            context={},
        )
    with pytest.raises(ValueError, match="concurrency must be within 1..64"):
        asyncio.run(run_syndec([], tmp_path / "s", concurrency=concurrency))


def test_a_huge_top_k_is_refused_under_a_memory_limit():
    """top_k=10**9 would make Milvus Lite allocate 23 GB; under a 3 GB cap it must exit at once."""
    from tests.reliability.child_cli import one_line_exit, run_cli_limited

    done = run_cli_limited(["verify", "The sky is blue.", "--set", "top_k=1000000000"])
    one_line_exit(done.returncode, done.stderr + done.stdout, "setting top_k must be within")
