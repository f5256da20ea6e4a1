"""Compare pairs only what matches (the same data, the same items) and says what samples support."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factdebate.bench.judging.page import render_compare_page
from factdebate.bench.judging.report import compare_runs
from factdebate.bench.judging.stats import MIN_DISCORDANT, paired_test
from tests.bench.test_runner import bench as cot_run
from tests.bench.test_runner import make_data

Scripted = Callable[..., tuple[str, Any]]
GOLD = {"S": "SUPPORTS", "R": "REFUTES", "N": "NOT ENOUGH INFO"}


def answering(golds: str, right: bool) -> Callable[[str], str]:
    """A reply that is the claim's gold label (``right``) or another label."""

    def reply(prompt: str) -> str:
        number = int(re.search(r"Claim number (\d+)", prompt).group(1))  # type: ignore[union-attr]
        gold = GOLD[golds[number]]
        wrong = "NOT ENOUGH INFO" if gold != "NOT ENOUGH INFO" else "SUPPORTS"
        return f"Reasons.\n**{gold if right else wrong}**"

    return reply


def runs(tmp: Path, scripted: Scripted, golds: str, *rights: bool) -> list[Path]:
    """One CoT run per entry of ``rights`` (every answer right, or every answer wrong)."""
    data = make_data(tmp / "data", golds)
    folders = []
    for n, right in enumerate(rights):
        name, _ = scripted([("Claim number", answering(golds, right))])
        cot_run(tmp, data, name, folder=f"run{n}", concurrency=1)
        folders.append(tmp / f"run{n}")
    return folders


def relabel(folder: Path, name: str, **changes: Any) -> Path:
    """A copy of a run folder under ``name`` whose run.json (and metrics.json's) say ``changes``."""
    copy = folder.parent / name
    shutil.copytree(folder, copy)
    for path in (copy / "run.json", copy / "metrics.json"):
        stored = json.loads(path.read_text())
        (stored if path.name == "run.json" else stored["run"]).update(changes)
        path.write_text(json.dumps(stored))
    return copy


def rewrite_rows(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = folder / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        change(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def paired_rows(table: str) -> list[list[str]]:
    """The rows of the paired-test table (10 cells), header left out."""
    part = table.split("## Paired tests", 1)[1] if "## Paired tests" in table else ""
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in part.splitlines()]
    return [c for c in cells if len(c) == 10 and c[0] not in ("A", "---")]


def test_runs_over_different_datasets_get_no_paired_row(tmp_path: Path, scripted: Scripted):
    (run,) = runs(tmp_path, scripted, "SSRN", True)
    averitec = relabel(run, "averitec-cot", dataset="averitec")
    scifact = relabel(run, "scifact-cot", dataset="scifact")
    before = {p: p.read_bytes() for p in (averitec / "results.jsonl", scifact / "results.jsonl")}
    table = compare_runs([averitec, scifact])
    assert "| averitec-cot | cot | averitec | 4 |" in table  # side by side, as runs
    assert paired_rows(table) == []  # the same ids, but not the same items: no pair
    assert "No pair to test." in table and "| A | B |" not in table
    assert (
        "averitec-cot vs scifact-cot: not paired, different datasets (averitec, scifact)" in table
    )
    assert all(p.read_bytes() == data for p, data in before.items())
    copy = relabel(run, "other-copy", dataset_sha256="0" * 64)  # same name, other data
    assert json.loads((run / "run.json").read_text())["dataset_sha256"]  # recorded at bench time
    table = compare_runs([run, copy])
    assert paired_rows(table) == []
    assert "different copies of fever-mini (their data fingerprints differ)" in table
    page = render_compare_page([averitec, scifact])
    assert 'id="paired"' not in page and "not paired, different datasets" in page


def test_a_pair_without_a_shared_item_shows_na(tmp_path: Path, scripted: Scripted):
    (run,) = runs(tmp_path, scripted, "SSRN", True)
    other_ids = relabel(run, "other-ids")
    rewrite_rows(other_ids, lambda row: row.update(id=f"x{row['id']}"))
    other_claims = relabel(run, "other-claims")  # the same ids, other claims: other items
    rewrite_rows(other_claims, lambda row: row.update(claim=row["claim"] + " Changed."))
    table = compare_runs([run, other_ids, other_claims])
    rows = {(r[0], r[1]): r for r in paired_rows(table)}
    for pair in (("run0", "other-ids"), ("run0", "other-claims")):
        assert rows[pair][2:] == ["0", "0", *["n/a"] * 6], rows[pair]  # never 0.0 / +0.0
    assert "4 share an id but not the claim or gold" in table
    page = render_compare_page([run, other_ids])
    assert "+0.0" not in page.split('id="paired"')[1].split("</table>")[0]


def test_a_two_item_pair_is_flagged_too_small(tmp_path: Path, scripted: Scripted):
    right, wrong = runs(tmp_path, scripted, "SR", True, False)
    found = paired_test(*(compare_rows(d) for d in (right, wrong)), "labels")
    assert (found["n"], found["discordant"], found["meaningful"]) == (2, 2, False)
    assert found["p_mcnemar"] == 0.5 and found["p_bootstrap"] < 0.001  # why neither is shown
    table = compare_runs([right, wrong])
    (row,) = paired_rows(table)
    too_small = f"not meaningful (2 discordant < {MIN_DISCORDANT})"
    assert row[:7] == ["run0", "run1", "2", "2", "100.0", "0.0", "+100.0"]
    assert row[8] == row[9] == too_small
    assert "What the pairs support" in table and "What the sample supports: n = 2" in table
    assert "(wide: under 30 items)" in table
    page = render_compare_page([right, wrong])
    assert '<p class="muted support">What the sample supports: n = 2' in page
    assert "not meaningful (2 discordant &lt; 6)" in page and "What the pairs support" in page


def compare_rows(folder: Path) -> list[dict[str, Any]]:
    from factdebate.bench import load_run

    return load_run(folder)


def test_headline_macro_f1_is_over_the_gold_classes(tmp_path: Path, scripted: Scripted):
    (run,) = runs(tmp_path, scripted, "SRSR", True)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["macro_f1_gold"] == 1.0 and metrics["macro_f1_gold_labels"] == [
        "SUPPORTS",
        "REFUTES",
    ]
    assert abs(metrics["macro_f1"] - 2 / 3) < 1e-9  # all three classes, kept by its name
    table = compare_runs([run])
    scores = "100.0 [100.0, 100.0]"  # accuracy, then macro-F1 over the two gold classes
    assert f"| run0 | cot | fever-mini | 4 | {scores} | {scores} | 0 |" in table
    assert "classes present in the gold labels (SUPPORTS, REFUTES)" in table
    assert "as macro_f1" in table
    header, rule = table.splitlines()[:2]
    assert header.count("|") == rule.count("|")  # one alignment cell per column


def test_comparison_states_each_runs_settings_and_a_matched_k(tmp_path: Path, scripted: Scripted):
    (run,) = runs(tmp_path, scripted, "SR", True)
    match = {
        "on": "calls",
        "k": 7,
        "target_per_item": 6.5,
        "per_sample": 1.0,
        "target": {"run_dir": "/x/tool-mad", "method": "tool-mad", "items": 2},
    }
    (run / "match.json").write_text(json.dumps(match))
    table = compare_runs([run])
    assert "Settings each run ran with:" in table
    assert re.search(r"- run0: limit none, seed 0; settings `\{\"model\": \"scripted-", table)
    assert "k = 7, matched on calls to tool-mad (tool-mad: 6.5 calls per item" in table


def test_a_usd_plot_where_every_cost_is_0_is_not_drawn(tmp_path: Path, scripted: Scripted):
    from factdebate.bench.judging.pareto import pareto_view
    from factdebate.bench.judging.prices import Price
    from factdebate.runs.reader import read_metrics

    (run,) = runs(tmp_path, scripted, "SR", True)
    metrics = read_metrics(run).as_dict()
    model = str(metrics["run"]["context"]["model"])
    free = pareto_view([("run0", metrics)], {model: Price(0.0, 0.0)})
    assert free["usd"] and not free["usd_plot"]
    assert [p["id"] for p in free["plots"]] == ["pareto-tokens"]
    paid = pareto_view([("run0", metrics)], {model: Price(1.0, 1.0)})
    assert [p["id"] for p in paid["plots"]] == ["pareto-tokens", "pareto-usd"]


def test_the_compare_page_heads_macro_f1_with_the_gold_classes(tmp_path: Path, scripted: Scripted):
    (run,) = runs(tmp_path, scripted, "SR", True)
    page = render_compare_page([run])
    assert (
        '100.0 <span class="muted">(over the gold classes SUPPORTS, REFUTES; over all 3: 66.7)'
        in page
    )


def test_failed_calls_are_counted_apart_from_the_calls_spent(tmp_path: Path, scripted: Scripted):
    data = make_data(tmp_path / "data", "SR")
    name, _ = scripted(
        [("Claim number 1", TimeoutError("no answer in time"))], default="**SUPPORTS**"
    )
    cot_run(
        tmp_path,
        data,
        name,
        folder="run",
        concurrency=1,
        context={"model": name, "model_retries": 0},
    )
    run = tmp_path / "run"
    metrics = json.loads((run / "metrics.json").read_text())
    assert (metrics["failed"], metrics["failed_calls"], metrics["cost"]["llm_calls"]) == (1, 1, 2)
    assert (
        "1 of the calls brought no reply (counted in the calls)" in (run / "report.md").read_text()
    )
    table = compare_runs([run])
    assert re.search(r"\| run \| cot \| fever-mini \| 2 \| .* \| 1 \| 0\.5 \| 1\.0 \|", table)
