"""Bench report page: item texts, per-item debate pages, error kinds, baseline, plots, Chromium."""

from __future__ import annotations

import json
import re
import struct
from base64 import b64decode
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench import read_results, run_bench
from factdebate.bench.judging.page import (
    AUTO_PAGES,
    item_page,
    item_rows,
    pages_wanted,
    render_compare_page,
    run_plots,
)
from factdebate.bench.judging.report import compute_metrics, majority_baseline, render_report
from factdebate.cli import app
from tests.bench.test_runner import bench, make_data
from tests.chromium import keep_screenshot, opener, visible

HOSTILE = "<script>alert('pwned')</script>"
REASONING = "Per the evidence, Paris is in France."
runner = CliRunner()


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    """Open a local page in headless Chromium: its DOM after loading, and a screenshot."""
    return opener(tmp_path)


def rag_cot_bench(tmp: Path, scripted: Any, golds: str = "SSSR", **kw: Any) -> Path:
    """RAG-CoT over a fever-mini-shaped set whose items ship their evidence (no index needed):
    item 2's answer has no readable label, item 3's argues REFUTES."""
    data = make_data(tmp / "data", golds)
    name, _ = scripted(
        [("number 2", "I cannot tell."), ("number 3", f"{HOSTILE} Not there.\n**REFUTES**")],
        default=f"{REASONING}\n**SUPPORTS**",
    )
    context = {"model": name, "collection": "given_evidence_only"}
    run_bench(
        "rag-cot",
        "fever-mini",
        tmp / "run",
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=2,
        context=context,
        **kw,
    )
    return tmp / "run"


def png_size(uri: str) -> tuple[int, int]:
    """Width and height of a PNG data: URI (from its IHDR chunk)."""
    data = b64decode(uri.split(",", 1)[1])
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_rows_carry_the_text_and_small_runs_link_a_page_per_item(tmp_path: Path, scripted):
    run = rag_cot_bench(tmp_path, scripted)
    rows = read_results(run / "results.jsonl")
    assert sorted(r["claim"] for r in rows) == [f"Claim number {i} about Paris." for i in range(4)]
    pages = sorted((run / "pages").iterdir())
    assert len(pages) == 4 and {p.name for p in pages} == {
        Path(item_page(r["id"])).name for r in rows
    }
    report = (run / "report.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="(pages/[^"]+)">page</a>', report)
    assert sorted(links) == sorted(item_page(r["id"]) for r in rows)
    text, _ = visible(report)
    assert "Claim number 3 about Paris." in text
    assert re.search(r"accuracy % majority class % .* 75\.0 75\.0 \(SUPPORTS\)", text)
    assert "parse_error" in text and text.count("none") >= 3  # error kinds per item
    first = next(r for r in rows if r["id"] == "0")  # rows come in the order items finished
    page = (run / item_page(first["id"])).read_text(encoding="utf-8")
    text, _ = visible(page)
    assert "Claim number" in text and "Paris is in France." in text  # evidence text
    decided = "Decided by rag_cot after round 1: One answer from the evidence."
    assert f"{decided} Reasoning of the rag_cot {REASONING}" in text
    assert "**" not in text
    assert re.search(r"run time \d+\.\d s", text)


def test_pages_rule_and_switch(tmp_path: Path, scripted):
    assert pages_wanted(None, AUTO_PAGES) and not pages_wanted(None, AUTO_PAGES + 1)
    assert pages_wanted(True, 10**6) and not pages_wanted(False, 1)
    run = rag_cot_bench(tmp_path, scripted, pages=False)
    assert not (run / "pages").exists()
    text, _ = visible((run / "report.html").read_text(encoding="utf-8"))
    assert "No per-item debate pages were written" in text and "bench --pages writes" in text
    assert "page</a>" not in (run / "report.html").read_text(encoding="utf-8")


def test_item_page_names_are_safe_and_distinct():
    names = {item_page(i) for i in ("a/b", "a_b", "../../etc", "x" * 500, 7)}
    assert len(names) == 5
    for name in names:
        assert re.fullmatch(r"pages/[A-Za-z0-9._-]{1,60}-[0-9a-f]{8}\.html", name), name


def test_item_rows_mark_wrong_items_and_count_error_kinds(tmp_path: Path):
    rows = [
        {"id": "q1", "question": "When?", "gold": ["1877"], "wrong": [], "prediction": ["1877"]},
        {"id": "q2", "question": "Who?", "gold": ["Ann"], "wrong": ["Bob"], "prediction": ["Bob"]},
        {
            "id": "c1",
            "claim": "It is.",
            "gold": "SUPPORTS",
            "prediction": None,
            "errors": [{"kind": "parse_error"}, {"kind": "parse_error"}, {"kind": "truncated"}],
        },
    ]
    (tmp_path / "pages").mkdir()
    (tmp_path / item_page("q2")).write_text("<p>page</p>")
    shown = item_rows(tmp_path, rows)
    assert [r["right"] for r in shown] == [True, False, False]
    assert [r["text"] for r in shown] == ["When?", "Who?", "It is."]
    assert shown[2]["error_kinds"] == {"parse_error": 2, "truncated": 1}
    assert [r["page"] for r in shown] == [None, item_page("q2"), None]  # only pages written


def test_majority_baseline_and_report_line():
    assert majority_baseline([], ["SUPPORTS"]) is None
    tie = majority_baseline(["REFUTES", "SUPPORTS"], ["SUPPORTS", "REFUTES"])
    assert tie == {"label": "SUPPORTS", "accuracy": 0.5, "support": 1}
    rows = [
        {"gold": g, "prediction": "REFUTES", "stop_reason": "x", "rounds": 1, "errors": []}
        for g in ("REFUTES", "NOT ENOUGH INFO", "NOT ENOUGH INFO")
    ]
    metrics = compute_metrics(rows, ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"])
    assert metrics["majority"]["label"] == "NOT ENOUGH INFO"
    assert metrics["majority"]["accuracy"] == pytest.approx(2 / 3)
    report = render_report(metrics, {"method": "m", "dataset": "d"})
    assert "Majority-class baseline: always answering NOT ENOUGH INFO scores 66.7" in report


def test_plots_share_one_size_and_counts_are_whole_numbers(tmp_path: Path, scripted):
    run = rag_cot_bench(tmp_path, scripted)
    metrics = json.loads((run / "metrics.json").read_text())
    plots = run_plots(run, metrics, read_results(run / "results.jsonl"))
    titles = [p["title"] for p in plots]
    assert titles == [
        "Confusion matrix (rows gold, columns predicted)",
        "Per-class precision, recall and F1 (%)",
        "Rounds held",
        "Stop reasons",
        "Latency per item (seconds)",
        "Cost per item (tokens in + out)",
    ]
    assert {png_size(p["src"]) for p in plots} == {(640, 360)}


def test_plot_axes_count_in_whole_numbers_and_scores_in_percent(
    tmp_path: Path, scripted, monkeypatch
):
    import factdebate.bench.judging.page as bench_page

    run = rag_cot_bench(tmp_path, scripted)
    figures: dict[str, Any] = {}

    def keep(fig: Any) -> str:
        fig.canvas.draw()
        figures[fig.axes[0].get_title()] = fig
        return "data:image/png;base64,"

    monkeypatch.setattr(bench_page, "_data_uri", keep)
    metrics = json.loads((run / "metrics.json").read_text())
    run_plots(run, metrics, read_results(run / "results.jsonl"))

    def ticks(title: str, axis: str) -> list[float]:
        ax = figures[title].axes[0]
        low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
        locs = ax.get_xticks() if axis == "x" else ax.get_yticks()
        return [float(t) for t in locs if low <= t <= high]

    for title, axis in [
        ("rounds per item", "y"),
        ("stop reasons", "y"),
        ("latency per item", "x"),
        ("cost per item", "x"),
    ]:
        shown = ticks(title, axis)
        assert shown and all(t == int(t) for t in shown), (title, shown)
    assert ticks("per class", "y") == [0, 20, 40, 60, 80, 100]
    assert figures["per class"].axes[0].get_ylabel() == "%"


def test_report_and_compare_page_in_chromium(tmp_path: Path, scripted, browser):
    run = rag_cot_bench(tmp_path, scripted)
    dom = browser(run / "report.html", tmp_path / "bench.png", size="1280,2100")
    keep_screenshot(tmp_path / "bench.png", "bench-report.png")  # docs/img (see docs/pages.md)
    text, tags = visible(dom)
    assert "rag-cot on fever-mini" in text and "Scores are in percent." in text
    assert "script" not in tags and "**" not in text
    assert len(re.findall(r'<img[^>]* src="data:image/png;base64,', dom)) == 6
    assert re.search(r'<span class="label REFUTES">REFUTES</span>', dom)  # predictions as labels
    rows = read_results(run / "results.jsonl")
    refuted = next(r for r in rows if r["claim"].startswith("Claim number 3"))
    dom = browser(run / item_page(refuted["id"]), tmp_path / "item.png")
    text, tags = visible(dom)
    assert "Paris is in France." in text  # the evidence text of the item
    assert f"Reasoning of the rag_cot {HOSTILE} Not there." in text  # escaped, not markup
    assert "script" not in tags and "**REFUTES**" not in text
    one = tmp_path / "one.html"
    shown = runner.invoke(app, ["bench", "--compare", str(run), "--html", str(one)])
    assert shown.exit_code == 0, shown.output
    text, _ = visible(browser(one, tmp_path / "one.png"))
    assert "1 run side by side" in text and "1 runs" not in text
    name, _ = scripted([("number 0", "No.\n**REFUTES**")], default="Yes.\n**SUPPORTS**")
    cot = tmp_path / "cot"
    bench(tmp_path, tmp_path / "data", name, folder="cot", concurrency=1)
    two = tmp_path / "cmp" / "compare.html"
    shown = runner.invoke(app, ["bench", "--compare", str(run), str(cot), "--html", str(two)])
    assert shown.exit_code == 0, shown.output
    dom = browser(two, tmp_path / "compare.png")
    keep_screenshot(tmp_path / "compare.png", "bench-compare.png")
    text, _ = visible(dom)
    assert "2 runs side by side" in text
    assert "run rag-cot fever-mini 4 75.0 75.0 (SUPPORTS)" in text
    assert "cot cot fever-mini 4 50.0 75.0 (SUPPORTS)" in text
    # 3 bars + 2 matrices + accuracy against tokens (the scripted model has no price: no USD plot)
    assert len(re.findall(r'<img[^>]* src="data:image/png', dom)) == 6


def test_compare_page_needs_finished_runs(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="no metrics.json"):
        render_compare_page([tmp_path])
    bad = runner.invoke(app, ["bench", "--out", str(tmp_path / "r"), "--html", "x.html"])
    assert bad.exit_code == 2 and "--html goes with --compare" in bad.output


def test_interval_note_counts_the_runs_items(tmp_path: Path, scripted: Any) -> None:
    data = make_data(tmp_path / "data", "SRNS")
    name, _ = scripted([], default="Reasons.\n**SUPPORTS**")
    bench(tmp_path, data, name, concurrency=1)
    page = (tmp_path / "run" / "report.html").read_text()
    assert "Percentile bootstrap over 4 items;" in page and "built-in method" not in page
