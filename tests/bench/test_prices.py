"""Model prices, USD per run (per item, per right answer) in metrics, report and compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench.judging.pareto import pareto_front, pareto_rows, score_of, wilson
from factdebate.bench.judging.prices import (
    DEFAULT_PRICES,
    MAX_PRICES_BYTES,
    PRICES_ENV,
    Price,
    load_prices,
    parse_price,
    price_of,
    read_prices_file,
    role_models,
    run_usd,
    usd_cost,
)
from factdebate.bench.judging.report import compare_runs, render_report
from factdebate.tools.core.errors import SettingsError

PRICES = {"p:cheap": Price(1.0, 2.0), "p:dear": Price(10.0, 20.0)}


def metrics_of(
    context: dict[str, Any], per_role: dict[str, dict[str, int]], accuracy: float, n: int = 4
) -> dict[str, Any]:
    """A label run's metrics.json as write_summary shapes it (without USD)."""
    total = {k: sum(u.get(k, 0) for u in per_role.values()) for k in ("input_tokens",)}
    return {
        "task": "labels",
        "n": n,
        "accuracy": accuracy,
        "cost": {
            "llm_calls": sum(u.get("llm_calls", 0) for u in per_role.values()),
            "input_tokens": total["input_tokens"],
            "output_tokens": sum(u.get("output_tokens", 0) for u in per_role.values()),
            "per_item": {
                "llm_calls": 1.0,
                "input_tokens": total["input_tokens"] / n,
                "output_tokens": sum(u.get("output_tokens", 0) for u in per_role.values()) / n,
            },
            "per_role": per_role,
        },
        "run": {"method": "tool-mad", "dataset": "fever-mini", "context": context},
    }


def test_every_default_price_names_its_date_and_source():
    for model, price in DEFAULT_PRICES.items():
        assert ":" in model and price.as_of[:4] in ("2025", "2026"), model
        assert price.source.startswith("https://") and 0 < price.input <= price.output


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("openai:gpt-4o-mini=0.15,0.6", ("openai:gpt-4o-mini", 0.15, 0.6)),
        ("openai-compatible:m@http://h:1/v1=0,0", ("openai-compatible:m@http://h:1/v1", 0, 0)),
    ],
)
def test_a_price_option_reads_model_input_and_output(text, wanted):
    model, price = parse_price(text)
    assert (model, price.input, price.output) == wanted


@pytest.mark.parametrize(
    "text", ["gpt", "m=1", "m=1,2,3", "m=a,b", "m=-1,2", "m=1,nan", "m=1,20000", "=1,2"]
)
def test_bad_price_options_are_refused(text):
    with pytest.raises(SettingsError):
        parse_price(text)


def test_the_prices_file_is_read_with_a_limit_and_checked(tmp_path, monkeypatch):
    good = tmp_path / "prices.toml"
    good.write_text('"x:model" = {input = 0.5, output = 1.5}\n"y:m" = [2, 3]\n', "utf-8")
    assert read_prices_file(good)["x:model"].output == 1.5
    monkeypatch.setenv(PRICES_ENV, str(good))
    prices = load_prices(["y:m=7,8"])
    assert prices["x:model"].input == 0.5 and prices["y:m"].input == 7  # --price wins
    assert "openai:gpt-4o-mini" in prices  # defaults stay
    bad = tmp_path / "bad.toml"
    bad.write_text('"x:m" = {input = "cheap", output = 1}\n', "utf-8")
    with pytest.raises(SettingsError, match="must be numbers"):
        read_prices_file(bad)
    big = tmp_path / "big.json"
    big.write_text("{" + " " * MAX_PRICES_BYTES + "}", "utf-8")
    with pytest.raises(SettingsError, match="over"):
        read_prices_file(big)
    monkeypatch.setenv(PRICES_ENV, str(tmp_path / "missing.toml"))
    with pytest.raises(SettingsError, match="missing.toml"):
        load_prices()


def test_the_home_prices_file_is_found(tmp_path, monkeypatch):
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path))
    assert "z:m" not in load_prices()
    (tmp_path / "prices.toml").write_text('"z:m" = [1, 1]\n', "utf-8")
    assert load_prices()["z:m"].input == 1


def test_snapshots_take_their_alias_price_and_local_models_are_free():
    assert price_of("anthropic:claude-haiku-4-5-20251001", DEFAULT_PRICES) is not None
    assert price_of("openai:gpt-4o-mini", DEFAULT_PRICES) == DEFAULT_PRICES["openai:gpt-4o-mini"]
    for free in ("local", "hf:o/r/f.gguf", "hf-local:runs/m", "ollama:llama3.1"):
        assert price_of(free, {}) == Price(0.0, 0.0, "", "runs on your own machine")
    assert price_of("openai:unknown-model", DEFAULT_PRICES) is None
    assert price_of("localhost:x", {}) is None


def test_each_role_is_priced_at_the_model_it_used(monkeypatch):
    monkeypatch.delenv("FACTDEBATE_MODEL", raising=False)
    monkeypatch.delenv("FACTDEBATE_JUDGE_MODEL", raising=False)
    context = {"model": "p:cheap", "judge_model": "p:dear"}
    roles = ["debater", "judge", "moderator", "scorer", "clerk", "agent"]
    models = role_models(context, roles)
    assert models == {
        "debater": ["p:cheap"],
        "judge": ["p:dear"],
        "moderator": ["p:dear"],
        "scorer": ["p:cheap"],
        "clerk": ["p:cheap"],
        "agent": ["p:cheap"],
    }
    assert role_models({}, ["debater"]) == {"debater": ["local"]}
    monkeypatch.setenv("FACTDEBATE_JUDGE_MODEL", "p:dear")  # the run's env fallback
    assert role_models({"model": "p:cheap"}, ["judge"]) == {"judge": ["p:dear"]}
    jury = role_models({"model": "p:cheap", "juror_models": ["p:dear", "p:cheap"]}, ["debater"])
    assert jury == {"debater": ["p:cheap", "p:dear"]}
    usage = {
        "debater": {"input_tokens": 1_000_000, "output_tokens": 0},
        "judge": {"input_tokens": 0, "output_tokens": 1_000_000},
    }
    priced = usd_cost(usage, models, PRICES)
    assert priced["usd_per_role"] == {"debater": 1.0, "judge": 20.0} and priced["usd"] == 21.0
    mixed = usd_cost(usage, {**models, **jury}, PRICES)  # jurors on two prices: unpriced
    assert mixed["usd"] is None and mixed["usd_per_role"]["debater"] is None


def test_usd_per_item_and_per_right_answer_and_unpriced_is_never_zero():
    per_role = {
        "debater": {"llm_calls": 4, "input_tokens": 2_000_000, "output_tokens": 1_000_000},
        "total": {"llm_calls": 4, "input_tokens": 2_000_000, "output_tokens": 1_000_000},
    }
    metrics = metrics_of({"model": "p:cheap"}, per_role, accuracy=0.5)
    metrics["cost"]["per_role"].pop("total")
    usd = run_usd(metrics, PRICES)
    assert usd["usd"] == pytest.approx(4.0)  # 2 M in at $1 + 1 M out at $2
    assert usd["usd_per_item"] == pytest.approx(1.0)
    assert usd["usd_per_right_answer"] == pytest.approx(2.0) and usd["right_answers"] == 2
    assert run_usd({**metrics, "accuracy": 0.0}, PRICES)["usd_per_right_answer"] is None
    unpriced = run_usd(metrics_of({"model": "q:new"}, metrics["cost"]["per_role"], 0.5), PRICES)
    assert unpriced["usd"] is None and unpriced["unpriced"] == ["q:new"]
    assert unpriced["usd_per_item"] is None


def _write_run(folder: Path, metrics: dict[str, Any]) -> Path:
    folder.mkdir(parents=True)
    metrics.setdefault("latency", {"mean_s": 1.0, "p50_s": 1.0, "p90_s": 1.0, "max_s": 1.0})
    metrics.setdefault("failed", 0)
    metrics.setdefault("macro_f1", metrics["accuracy"])
    metrics.setdefault("unparsed", 0)
    (folder / "metrics.json").write_text(json.dumps(metrics), "utf-8")
    return folder


def test_report_and_compare_show_usd_next_to_calls_and_tokens(tmp_path):
    per_role = {"debater": {"llm_calls": 4, "input_tokens": 400_000, "output_tokens": 100_000}}
    metrics = metrics_of({"model": "p:cheap"}, per_role, accuracy=0.5)
    metrics["cost"].update(run_usd(metrics, PRICES))
    metrics.update({"macro_f1": 0.5, "unparsed": 0, "labels": [], "per_class": {}, "confusion": {}})
    metrics.update({"failed": 0, "items_with_errors": 0, "mean_rounds": 1.0})
    metrics.update({"stop_reasons": {}, "error_kinds": {}})
    metrics["latency"] = {"mean_s": 1.0, "p50_s": 1.0, "p90_s": 1.0, "max_s": 1.0}
    text = render_report(metrics, metrics["run"])
    assert "USD $0.6000 ($0.15000 per item, $0.30000 per right answer)" in text
    assert "| debater | 4 | 400000 | 100000 | $0.6000 |" in text
    unpriced = metrics_of({"model": "q:new"}, per_role, accuracy=0.5)
    unpriced["cost"].update(run_usd(unpriced, PRICES))
    for key in ("macro_f1", "unparsed", "labels", "per_class", "confusion", "failed"):
        unpriced[key] = metrics[key]
    unpriced.update({k: metrics[k] for k in ("items_with_errors", "mean_rounds", "latency")})
    unpriced.update({"stop_reasons": {}, "error_kinds": {}})
    text = render_report(unpriced, unpriced["run"])
    assert "USD: unpriced (no price for q:new" in text and "$0.0000" not in text
    a = _write_run(tmp_path / "a", metrics_of({"model": "p:cheap"}, per_role, accuracy=0.5))
    b = _write_run(tmp_path / "b", metrics_of({"model": "q:new"}, per_role, accuracy=0.25))
    table = compare_runs([a, b], prices=PRICES)
    assert "USD/item | USD/right answer" in table
    row_a = next(line for line in table.splitlines() if line.startswith("| a |"))
    row_b = next(line for line in table.splitlines() if line.startswith("| b |"))
    assert "$0.15000 | $0.30000" in row_a and "unpriced | unpriced" in row_b


def test_the_pareto_front_keeps_only_unbeaten_runs():
    points = [
        ("cheap-bad", 10, 0.5),
        ("dear-good", 100, 0.9),
        ("dear-bad", 100, 0.5),
        ("tie", 10, 0.5),
        ("mid", 50, 0.9),
    ]
    assert pareto_front(points) == ["cheap-bad", "tie", "mid"]
    low, high = wilson(8, 10)
    assert low is not None and high is not None and 0.44 < low < 0.5 and 0.94 < high < 0.98
    assert wilson(0, 0) == (None, None)


def test_pareto_rows_use_the_bootstrap_interval_when_the_run_has_one():
    per_role = {"debater": {"llm_calls": 4, "input_tokens": 4000, "output_tokens": 400}}
    with_interval = metrics_of({"model": "p:cheap"}, per_role, 0.5)
    with_interval["intervals"] = {"accuracy": {"low": 0.25, "high": 0.75}}
    assert score_of(with_interval) == ("accuracy", 0.5, 0.25, 0.75)
    plain = metrics_of({"model": "q:new"}, per_role, 0.75)
    found = pareto_rows([("a", with_interval), ("b", plain)], PRICES)
    assert found["usd"] is False  # b is unpriced: no USD front
    assert [r["front_tokens"] for r in found["rows"]] == [False, True]
    assert [r["front_usd"] for r in found["rows"]] == [None, None]
