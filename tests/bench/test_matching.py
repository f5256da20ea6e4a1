"""Matched compute: k picked from another run's mean cost per item, run on the same sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate import FactDebateError
from factdebate.bench import read_results
from factdebate.bench.judging.matching import mean_cost, pick_k, read_target
from factdebate.cli import app
from tests.bench.test_runner import bench as cot_run
from tests.bench.test_runner import make_data

runner = CliRunner()
CALLS = [7, 9, 12, 10]  # the reference run's LLM calls per item: mean 9.5


@pytest.mark.parametrize(
    ("target", "per_sample", "k"),
    [(9.33, 1, 9), (9.5, 1, 10), (9.49, 1, 9), (1, 1, 1), (64.4, 1, 64), (1000, 180, 6)],
)
def test_pick_k_is_the_closest_k(target: float, per_sample: float, k: int) -> None:
    assert pick_k(target, per_sample) == k
    assert abs(k * per_sample - target) <= per_sample / 2


@pytest.mark.parametrize(("target", "per_sample"), [(0.4, 1), (64.6, 1), (5, 0), (5, -1)])
def test_pick_k_refuses_what_no_k_matches(target: float, per_sample: float) -> None:
    with pytest.raises(FactDebateError, match="cannot match compute"):
        pick_k(target, per_sample)


def test_failed_items_are_left_out_of_the_means() -> None:
    rows: list[dict[str, Any]] = [
        {"id": 1, "stop_reason": "vote", "cost": {"total": {"llm_calls": 4, "input_tokens": 10}}},
        {"id": 2, "stop_reason": "vote", "cost": {"total": {"llm_calls": 2, "output_tokens": 6}}},
        {"id": 3, "stop_reason": "error", "cost": {}},
    ]
    assert mean_cost(rows) == (2, 3.0, 8.0)


def reference_run(tmp_path: Path, name: str, seed: int = 3) -> Path:
    """A finished run on 3 of 4 claims, its costs set to a multi-call method's: CALLS, 4x tokens."""
    data = make_data(tmp_path / "data", "SRNS")
    run = tmp_path / "debate"
    cot_run(tmp_path, data, name, folder="debate", limit=3, seed=seed, concurrency=1)
    rows = read_results(run / "results.jsonl")
    for row, calls in zip(rows, CALLS, strict=False):
        total = row["cost"]["total"]
        total.update(
            llm_calls=calls,
            input_tokens=4 * total["input_tokens"],
            output_tokens=4 * total["output_tokens"],
        )
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def bench(*args: str) -> Any:
    return runner.invoke(app, ["bench", *args])


def test_match_compute_picks_k_within_one_call_on_the_same_sample(tmp_path, data_home, scripted):
    name, model = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = reference_run(tmp_path, name)
    target = sum(CALLS[:3]) / 3  # 9.33
    model.prompts.clear()
    out = tmp_path / "sc"
    result = bench(
        "--method", "self-consistency-cot", "--match-compute", str(run), "--model", name,
        "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "k = 9" in result.output
    rows = read_results(out / "results.jsonl")
    mean_calls = sum(r["cost"]["total"]["llm_calls"] for r in rows) / len(rows)
    assert abs(mean_calls - target) <= 1 and mean_calls == 9
    assert len(model.prompts) == 27
    ours, theirs = (json.loads((d / "run.json").read_text()) for d in (out, run))
    assert ours["context"]["k"] == 9
    for key in ("dataset", "limit", "seed", "data"):
        assert ours[key] == theirs[key], key
    assert {r["id"] for r in rows} == {r["id"] for r in read_results(run / "results.jsonl")}
    match = json.loads((out / "match.json").read_text())
    assert (match["on"], match["k"], match["target"]["items"]) == ("calls", 9, 3)


def test_match_on_tokens_measures_a_sample_with_a_pilot(tmp_path, data_home, scripted):
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = reference_run(tmp_path, name)
    target = read_target(run)
    out = tmp_path / "sc"
    result = bench(
        "--method", "self-consistency-cot", "--match-compute", str(run), "--match-on", "tokens",
        "--model", name, "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    match = json.loads((out / "match.json").read_text())
    pilot = read_results(out / "pilot" / "results.jsonl")
    per_sample = sum(r["cost"]["total"]["input_tokens"] + r["cost"]["total"]["output_tokens"]
                     for r in pilot) / len(pilot)  # fmt: skip
    assert json.loads((out / "pilot" / "run.json").read_text())["context"]["k"] == 1
    assert match["per_sample"] == pytest.approx(per_sample, abs=1e-3)
    assert match["k"] == round(target.tokens / per_sample) == 4  # the run spent 4 cot answers
    rows = read_results(out / "results.jsonl")
    assert all(r["cost"]["total"]["llm_calls"] == match["k"] for r in rows)


def test_refusals_are_one_line(tmp_path, data_home, scripted):
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = reference_run(tmp_path, name)
    out = str(tmp_path / "sc")
    cases = [
        (["--method", "cot", "--match-compute", str(run)], "use a self-consistency method"),
        (["--method", "self-consistency-cot", "--set", "k=3", "--match-compute", str(run)],
         "drop --set k"),
        (["--method", "self-consistency-cot", "--match-compute", str(tmp_path)], "no run.json"),
        (["--method", "self-consistency-cot", "--match-compute", str(run), "--match-on", "usd"],
         "--match-on must be calls or tokens"),
    ]  # fmt: skip
    for args, message in cases:
        result = bench(*args, "--model", name, "--out", out)
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
    claims = tmp_path / "data" / "fever" / "fever_rag_mini" / "claims.jsonl"
    claims.write_text(claims.read_text().replace("about Paris", "about Lyon"))
    result = bench("--method", "self-consistency-cot", "--match-compute", str(run),
                   "--model", name, "--out", out)  # fmt: skip
    assert result.exit_code == 2 and "not the same sample" in result.output
    assert not (tmp_path / "sc").exists()


def test_a_repeated_run_is_matched_over_all_its_repeats(tmp_path: Path, scripted: Any) -> None:
    from factdebate.bench.running.repeats import run_repeats

    data = make_data(tmp_path / "data", "SRN")
    name, _ = scripted([], default="Reasons.\n**SUPPORTS**")
    out = tmp_path / "mad"
    run_repeats(
        "mad",
        "fever-mini",
        out,
        repeats=2,
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=1,
        context={"model": name},
    )
    target = read_target(out)
    rows = [r for n in (1, 2) for r in read_results(out / f"repeat-{n}" / "results.jsonl")]
    assert target.method == "mad" and target.items == len(rows) == 6
    assert target.calls == pytest.approx(mean_cost(rows)[1])
    single = cot_run(tmp_path, data, name, folder="cot", concurrency=1)
    assert single["n"] == 3  # the same sample the repeats ran
    assert (
        target.items_sha256
        == json.loads((tmp_path / "cot" / "run.json").read_text())["data"]["items_sha256"]
    )


@pytest.mark.parametrize("calls", [-10, 2.9, "9", float("nan")])
def test_a_cost_that_cannot_be_is_refused_not_truncated(tmp_path, scripted, calls):
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = reference_run(tmp_path, name)
    rows = (run / "results.jsonl").read_text().splitlines()
    first = json.loads(rows[0])
    first["cost"]["total"]["llm_calls"] = calls
    damaged = "\n".join([json.dumps(first), *rows[1:]]) + "\n"
    (run / "results.jsonl").write_text(damaged)
    with pytest.raises(FactDebateError, match=r"--match-compute .*results.jsonl:1: .*llm_calls"):
        read_target(run)
    assert (run / "results.jsonl").read_text() == damaged  # left exactly as it was
    result = bench("--method", "self-consistency-cot", "--match-compute", str(run),
                   "--model", name, "--out", str(tmp_path / "sc"))  # fmt: skip
    assert result.exit_code == 2 and "llm_calls" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "sc").exists()


def test_an_estimate_of_a_matched_run_uses_its_sample_and_k(tmp_path, data_home, scripted):
    from tests.cli.test_estimate import earlier_run

    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    run = reference_run(tmp_path, name)  # 3 items, 9.33 calls per item: k = 9
    votes = earlier_run(tmp_path / "votes", "self-consistency-cot", k=5)  # 5 calls per item
    args = ["--estimate", "--method", "self-consistency-cot", "--match-compute", str(run),
            "--estimate-from", str(votes), "--dataset", "scifact"]  # fmt: skip
    result = bench(*args)
    assert result.exit_code == 0, result.output
    assert "self-consistency-cot on fever-mini, 3 item(s)" in result.output  # its sample
    assert (
        "| per item | 9.0 |" in result.output and "Scaled by 1.8 for the k asked" in result.output
    )
    for extra, message in ((["--match-on", "tokens"], "matches calls only"),
                           (["--set", "k=3"], "drop --set k")):  # fmt: skip
        refused = bench(*args, *extra)
        assert refused.exit_code == 2 and message in refused.output
