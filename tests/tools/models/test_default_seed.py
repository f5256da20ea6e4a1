"""A hosted provider that takes a seed gets one in every sampled call by default; reruns repeat.

The connection check before a run (``tools/models/reach.py``) is one 8-token greedy call with
a fresh nonce, not a sampled one: it is left out of the comparisons.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from factdebate.api import averify
from factdebate.cli import app
from factdebate.nodes.context import Context
from factdebate.nodes.self_consistency.sample import sample_seed
from factdebate.tools.models.reach import PROBE_MARK
from tests.fake_provider import by_kind, fake_provider

CLAIM = "The Eiffel Tower is located in Paris."
ANSWERS = by_kind([], default="Every account places it in Paris.\n**SUPPORTS**")


async def payloads(method: str, **settings: Any) -> list[dict[str, Any]]:
    """The request bodies an OpenAI-compatible fake got from one run of ``method``."""
    with fake_provider(ANSWERS) as provider:
        result = await averify(
            CLAIM, method, model=provider.model(), current_date="2026-12-01", **settings
        )
        assert result["verdict"] == "SUPPORTS", result
        return list(provider.requests)


def test_the_default_sends_seed_zero_and_minus_one_sends_none() -> None:
    assert Context().sampling_seed == 0
    assert Context.from_settings({"sampling_seed": -1}).sampling_seed == -1


async def test_a_default_run_sends_the_same_seed_in_every_call() -> None:
    sent = await payloads("mad", max_rounds=1)
    assert len(sent) == 3  # two sides and the judge
    assert [body.get("seed") for body in sent] == [0, 0, 0]
    unseeded = await payloads("mad", max_rounds=1, sampling_seed=-1)
    assert len(unseeded) == 3 and not any("seed" in body for body in unseeded)
    chosen = await payloads("cot", sampling_seed=41)
    assert [body.get("seed") for body in chosen] == [41]


async def test_two_runs_of_one_command_send_identical_requests() -> None:
    first = await payloads("mad", max_rounds=2, judge_each_round=False)
    second = await payloads("mad", max_rounds=2, judge_each_round=False)
    assert len(first) == 5  # two rounds of two sides, then the judge
    key = lambda body: repr(sorted(body.items()))  # noqa: E731 - parallel sides: any order
    assert sorted(first, key=key) == sorted(second, key=key)


async def test_self_consistency_samples_each_take_a_seed_of_their_own() -> None:
    sent = await payloads("self-consistency-cot", k=3)
    seeds = sorted(int(body["seed"]) for body in sent)
    assert seeds == sorted(sample_seed(0, n) for n in (1, 2, 3))
    assert len(set(seeds)) == 3  # one prompt under one seed would sample alike
    again = await payloads("self-consistency-cot", k=3)
    assert sorted(int(body["seed"]) for body in again) == seeds
    unseeded = await payloads("self-consistency-cot", k=3, sampling_seed=-1)
    assert not any("seed" in body for body in unseeded)


def test_a_sample_seed_stays_in_the_settings_range_and_none_stays_none() -> None:
    seeds = {sample_seed(seed, n) for seed in (0, 1, 999_999) for n in range(1, 51)}
    assert all(0 <= s <= 999_999 for s in seeds) and len(seeds) == 150
    assert sample_seed(-1, 4) == -1


def test_two_verify_commands_send_identical_requests_and_print_the_same_result(
    data_home: Path,
) -> None:
    sent: list[list[dict[str, Any]]] = []
    printed: list[Any] = []
    with fake_provider(ANSWERS) as provider:
        command = ["verify", CLAIM, "--method", "mad", "--rounds", "1", "--json",
                   "--model", provider.model(), "--set", "current_date=2026-12-01"]  # fmt: skip
        for _ in range(2):
            provider.requests.clear()
            result = CliRunner().invoke(app, command)
            assert result.exit_code == 0, result.output
            calls = [b for b in provider.requests if PROBE_MARK not in json.dumps(b)]
            assert len(calls) == len(provider.requests) - 1  # one connection check, unsampled
            sent.append(sorted(calls, key=repr))
            printed.append(without_times(json.loads(result.output)))
    assert len(sent[0]) == 3 and {body.get("seed") for body in sent[0]} == {0}
    assert sent[0] == sent[1]
    assert printed[0] == printed[1]


def without_times(value: Any) -> Any:
    """``value`` without the keys that hold wall-clock times."""
    if isinstance(value, dict):
        return {
            k: without_times(v)
            for k, v in value.items()
            if not any(t in k for t in ("latency", "seconds", "elapsed", "time", "_s"))
        }
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def test_repeats_send_seed_r_or_with_minus_one_none(tmp_path: Path, data_home: Path) -> None:
    from factdebate.bench.running.repeats import run_repeats
    from tests.bench.test_runner import make_data

    data = make_data(tmp_path / "data", "SR")
    seeds: dict[int, set[Any]] = {}
    with fake_provider(ANSWERS) as provider:
        for given in (None, -1):
            provider.requests.clear()
            context: dict[str, Any] = {"model": provider.model()}
            if given is not None:
                context["sampling_seed"] = given
            run_repeats(
                "cot", "fever-mini", tmp_path / f"out{given}", repeats=2, context=context,
                data_dir=data, limit=None, seed=0, concurrency=1,
            )  # fmt: skip
            calls = [b for b in provider.requests if PROBE_MARK not in json.dumps(b)]
            assert len(calls) == 4  # 2 claims x 2 repeats
            seeds[given or 0] = {b.get("seed") for b in calls}
    assert seeds == {0: {1, 2}, -1: {None}}
