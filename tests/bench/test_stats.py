"""Bootstrap intervals, repeats and paired tests: widths shrink with repeats, planted gaps found."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from factdebate.bench import load_run
from factdebate.bench.judging.metrics import label_metrics
from factdebate.bench.judging.page import render_compare_page
from factdebate.bench.judging.report import compare_runs
from factdebate.bench.judging.stats import (
    accuracy_interval,
    macro_f1_interval,
    mcnemar_exact,
    metric_intervals,
    paired_bootstrap,
    paired_test,
)
from factdebate.bench.running.repeats import run_repeats
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.models.providers import register_model
from tests.bench.test_runner import make_data
from tests.fakes import ScriptedChatModel

LABELS = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]


def coin_rows(items: int, repeats: int, p: float = 0.5, seed: int = 0) -> list[dict[str, Any]]:
    """Rows of a run right on each (item, repeat) with chance ``p``, all gold SUPPORTS."""
    rng = random.Random(seed)
    return [
        {
            "id": i,
            "repeat": r,
            "gold": "SUPPORTS",
            "prediction": "SUPPORTS" if rng.random() < p else "REFUTES",
        }
        for r in range(1, repeats + 1)
        for i in range(items)
    ]


def width(interval: dict[str, Any]) -> float:
    return float(interval["high"]) - float(interval["low"])


def test_interval_brackets_the_estimate_and_is_reproducible() -> None:
    rows = coin_rows(60, 1, p=0.7, seed=3)
    first = accuracy_interval(rows)
    assert first == accuracy_interval(rows)  # fixed seed: the same report every time
    assert 0.0 <= first["low"] < first["estimate"] < first["high"] <= 1.0
    assert first["n"] == 60 and first["confidence"] == 0.95 and first["resamples"] > 0
    # a binomial 95% interval at n=60, p~0.7 is about +-0.12 wide
    assert 0.15 < width(first) < 0.35


def test_degenerate_samples_give_no_or_a_point_interval() -> None:
    one = accuracy_interval(coin_rows(1, 1))
    assert one["low"] is None and one["high"] is None and "fewer than 2" in one["method"]
    same = accuracy_interval(
        [{"id": i, "gold": "SUPPORTS", "prediction": "SUPPORTS"} for i in range(5)]
    )
    assert same["low"] == same["high"] == same["estimate"] == 1.0
    assert accuracy_interval([])["low"] is None
    assert macro_f1_interval(coin_rows(1, 3), LABELS)["low"] is None


def test_macro_f1_interval_matches_label_metrics_over_all_repeats() -> None:
    rows = coin_rows(40, 3, p=0.6, seed=5)
    rows += [{"id": 100 + i, "repeat": 1, "gold": "REFUTES", "prediction": None} for i in range(5)]
    interval = macro_f1_interval(rows, LABELS)
    scored = label_metrics([r["gold"] for r in rows], [r["prediction"] for r in rows], LABELS)
    assert interval["estimate"] == pytest.approx(scored["macro_f1"])
    assert interval["low"] < interval["estimate"] < interval["high"]
    assert interval["repeats"] == 3 and interval["n"] == 45


def test_intervals_shrink_with_repeats_on_a_synthetic_run() -> None:
    widths = {n: width(accuracy_interval(coin_rows(40, n, seed=n))) for n in (1, 4, 16)}
    assert widths[4] < 0.75 * widths[1] and widths[16] < 0.75 * widths[4]
    answers = [
        {
            "id": i,
            "repeat": 1,
            "gold": ["Paris"],
            "wrong": [],
            "prediction": ["Paris"] if i % 2 else [],
        }
        for i in range(10)
    ]
    names = set(metric_intervals(answers, "answers"))
    assert names == {
        "exact_match",
        "f1",
        "precision",
        "recall",
        "llm_calls_per_item",
        "tokens_per_item",
    }


def test_every_label_score_has_its_interval() -> None:
    labels = ("SUPPORTS", "REFUTES")
    rows = [
        {"id": i, "gold": labels[i % 2], "prediction": "SUPPORTS" if i % 3 else "REFUTES"}
        for i in range(30)
    ]
    found = metric_intervals(rows, "labels", labels)
    per_class = {k for k in found if ":" in k}
    assert per_class == {f"{m}:{label}" for m in ("precision", "recall", "f1") for label in labels}
    # the point estimate is the run's own per-class score, inside its interval
    gold_s = [r for r in rows if r["gold"] == "SUPPORTS"]
    recall = sum(r["prediction"] == "SUPPORTS" for r in gold_s) / len(gold_s)
    interval = found["recall:SUPPORTS"]
    assert interval["estimate"] == recall and interval["low"] < recall < interval["high"]


def test_paired_tests_find_a_planted_difference_and_not_a_null_one() -> None:
    gold = [{"id": i, "gold": "SUPPORTS"} for i in range(60)]
    good = [{**g, "prediction": "SUPPORTS" if i % 10 else "REFUTES"} for i, g in enumerate(gold)]
    weak = [{**g, "prediction": "SUPPORTS" if i % 5 < 2 else "REFUTES"} for i, g in enumerate(gold)]
    planted = paired_test(good, weak, "labels")
    assert planted["n"] == 60 and planted["difference"] == pytest.approx(0.5)
    assert planted["p_bootstrap"] < 0.01 and planted["p_mcnemar"] < 0.01
    assert 0.0 < planted["low"] < 0.5 < planted["high"]
    same = paired_test(good, good, "labels")
    assert same["p_bootstrap"] == 1.0 and same["p_mcnemar"] == 1.0 and same["difference"] == 0.0
    # two runs of equal skill, right on different items at random: no difference found
    a, b = coin_rows(200, 1, p=0.6, seed=11), coin_rows(200, 1, p=0.6, seed=12)
    null = paired_test(a, b, "labels")
    assert null["p_bootstrap"] > 0.2 and null["p_mcnemar"] > 0.2
    assert null["low"] < 0.0 < null["high"]


def test_paired_test_uses_only_shared_items_and_repeat_means() -> None:
    a = coin_rows(30, 4, p=0.9, seed=1)
    b = [r for r in coin_rows(50, 4, p=0.3, seed=2) if r["id"] >= 10]  # ids 10..49
    found = paired_test(a, b, "labels")
    assert (found["n"], found["items_a"], found["items_b"]) == (20, 30, 40)
    assert found["p_bootstrap"] < 0.01 and found["difference"] > 0.4


def test_mcnemar_and_bootstrap_edges() -> None:
    assert mcnemar_exact([True, False], [True, False]) == 1.0
    # 10 discordant pairs, all one way: two-sided binomial p = 2 * 0.5**10
    assert mcnemar_exact([True] * 10, [False] * 10) == pytest.approx(2 * 0.5**10)
    assert paired_bootstrap([1.0], [0.0])["p_bootstrap"] is None
    always = paired_bootstrap([1.0] * 8, [0.0] * 8)
    assert always["low"] == always["high"] == 1.0 and always["p_bootstrap"] < 0.001


class SeededModel(ScriptedChatModel):
    """Right or wrong per claim by a coin seeded with the model's ``seed`` and the claim."""

    seed: int | None = None
    seeds: list[Any] = []

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        number = re.search(r"Claim number (\d+)", prompt)
        self.seeds.append(self.seed)
        right = random.Random(f"{self.seed}-{number and number.group(1)}").random() < 0.5
        text = "Reasoning.\n**SUPPORTS**" if right else "Reasoning.\n**REFUTES**"
        self.prompts.append(prompt)
        usage = {"input_tokens": 10, "output_tokens": 2 + int(right), "total_tokens": 12}
        message = AIMessage(text, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


def repeated(tmp: Path, data: Path, model: str, repeats: int, name: str) -> dict[str, Any]:
    return run_repeats(
        "cot",
        "fever-mini",
        tmp / name,
        repeats=repeats,
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=2,
        context={"model": model},
    )


def test_bench_repeats_layout_seeds_intervals_and_resume(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data", "S" * 24)
    model = SeededModel(seeds=[])
    name = register_model("bench-seeded", model)
    single = repeated(tmp_path, data, name, 1, "one")
    assert (tmp_path / "one" / "results.jsonl").is_file()  # one repeat: a plain run folder
    assert not (tmp_path / "one" / "repeat-1").exists() and "repeats" not in single
    assert set(model.seeds) == {0}  # outside repeats a run sends the default seed, 0
    model.seeds.clear()
    combined = repeated(tmp_path, data, name, 8, "eight")
    out = tmp_path / "eight"
    assert sorted(p.name for p in out.glob("repeat-*")) == [f"repeat-{r}" for r in range(1, 9)]
    assert set(model.seeds) == set(range(1, 9))  # repeat r sends sampling seed r
    assert (combined["repeats"], combined["items"], combined["n"]) == (8, 24, 192)
    assert len({p["score"] for p in combined["per_repeat"]}) > 1  # the repeats differ
    stored = json.loads((out / "metrics.json").read_text())
    assert stored["intervals"]["accuracy"]["repeats"] == 8
    assert width(stored["intervals"]["accuracy"]) < 0.6 * width(single["intervals"]["accuracy"])
    assert stored["run"]["repeats"] == 8 and stored["run"]["task"] == "labels"
    assert any("temperature 0" in note for note in stored["run"]["notes"])
    rows = load_run(out)
    assert len(rows) == 192 and {r["repeat"] for r in rows} == set(range(1, 9))
    report = (out / "report.md").read_text()
    assert "Repeats: 8 runs of the same 24 items" in report and "95% bootstrap intervals" in report
    assert re.search(r"\| accuracy \| \d+\.\d \| \[\d+\.\d, \d+\.\d\] \|", report)
    assert "95% bootstrap intervals" in (out / "report.html").read_text()
    calls = len(model.prompts)
    again = repeated(tmp_path, data, name, 8, "eight")  # resumes: every repeat is finished
    assert len(model.prompts) == calls and again["accuracy"] == combined["accuracy"]
    table = compare_runs([tmp_path / "one", out])
    assert "## Paired tests (accuracy, shared items)" in table
    assert re.search(r"\| one \| eight \| 24 \|", table)
    with pytest.raises(SettingsError, match="sets sampling_seed itself"):
        run_repeats("cot", "fever-mini", tmp_path / "x", repeats=2, context={"sampling_seed": 3})
    with pytest.raises(SettingsError, match="--repeats must be within 1..50"):
        run_repeats("cot", "fever-mini", tmp_path / "x", repeats=51)


def test_compare_finds_a_planted_gap_between_scripted_runs(
    tmp_path: Path, scripted: Callable[..., tuple[str, Any]]
) -> None:
    data = make_data(tmp_path / "data", "S" * 60)

    def answer(right: Any) -> Any:
        def reply(prompt: str) -> str:
            number = int(re.search(r"Claim number (\d+)", prompt).group(1))  # type: ignore[union-attr]
            return "ok\n**SUPPORTS**" if right(number) else "ok\n**REFUTES**"

        return reply

    strong, _ = scripted([("Claim", answer(lambda n: n % 10 != 0))])  # right on 90%
    weak, _ = scripted([("Claim", answer(lambda n: n % 5 < 2))])  # right on 40%
    for model, folder in ((strong, "strong"), (weak, "weak"), (strong, "again")):
        repeated(tmp_path, data, model, 1, folder)
    dirs = [tmp_path / "strong", tmp_path / "weak", tmp_path / "again"]
    table = compare_runs(dirs)
    split = [[c.strip() for c in line.split("|")] for line in table.splitlines()]
    cells = {(row[1], row[2]): row for row in split if len(row) == 12}  # the paired table
    planted = cells[("strong", "weak")]
    assert planted[3] == "60" and planted[4] == "42" and planted[7] == "+50.0"
    assert planted[9] == "<0.001" and planted[10] == "<0.001"
    null = cells[("strong", "again")]  # the same answers: no discordant item, no test
    assert null[4] == "0" and null[7] == "+0.0"
    assert null[9] == null[10] == "not meaningful (0 discordant < 6)"
    assert "3 tests are listed, without correction" in table
    page = render_compare_page(dirs)
    assert 'id="paired"' in page and "+50.0" in page and "95% bootstrap intervals" in page
    assert "not meaningful (0 discordant &lt; 6)" in page
