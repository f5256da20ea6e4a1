"""The compare page's Pareto view: accuracy against tokens and USD per run, in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.bench.judging.report import write_summary
from factdebate.cli import app
from tests.chromium import keep_screenshot, opener, visible

runner = CliRunner()
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
# Reads, once the page has loaded, each image's natural width into an attribute --dump-dom shows.
PROBE = (
    "<script>window.addEventListener('load', () => { for (const img of document.images) "
    "img.setAttribute('data-natural-width', img.naturalWidth); });</script>"
)


def synthetic_run(
    folder: Path, method: str, right: int, tokens: int, model: str = "openai:gpt-4o-mini"
) -> Path:
    """A finished 10-claim run of ``method``: ``right`` right answers, ``tokens`` per item."""
    folder.mkdir(parents=True)
    rows = []
    for i in range(10):
        usage = {"llm_calls": 4, "input_tokens": tokens * 4 // 5, "output_tokens": tokens // 5}
        rows.append(
            {
                "id": f"c{i}",
                "claim": f"Claim {i}.",
                "gold": "SUPPORTS",
                "prediction": "SUPPORTS" if i < right else "REFUTES",
                "stop_reason": "consensus",
                "rounds": 1,
                "cost": {"debater": usage, "total": usage},
                "latency_s": 1.0,
                "errors": [],
            }
        )
    (folder / "results.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    run: dict[str, Any] = {
        "method": method,
        "dataset": "fever-mini",
        "limit": 10,
        "seed": 0,
        "context": {"model": model},
    }
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    write_summary(folder, rows, LABELS, run)
    return folder


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    """Two debate runs and a self-consistency run: the last is beaten on both axes."""
    return [
        synthetic_run(tmp_path / "toolmad", "tool-mad", right=8, tokens=25_000),
        synthetic_run(tmp_path / "mad", "mad", right=6, tokens=6_000),
        synthetic_run(tmp_path / "selfcons", "sc-cot", right=5, tokens=8_000),
    ]


def test_metrics_carry_usd_per_item_and_per_right_answer(runs: list[Path]):
    cost = json.loads((runs[0] / "metrics.json").read_text("utf-8"))["cost"]
    # 10 items x (20,000 in at $0.15 + 5,000 out at $0.60 per million) = $0.06
    assert cost["usd"] == pytest.approx(0.06)
    assert cost["usd_per_item"] == pytest.approx(0.006)
    assert cost["usd_per_right_answer"] == pytest.approx(0.06 / 8)
    assert cost["models"] == {"debater": ["openai:gpt-4o-mini"]}
    report = (runs[0] / "report.md").read_text("utf-8")
    assert "USD $0.0600 ($0.00600 per item, $0.00750 per right answer)" in report


def test_compare_page_plots_the_pareto_front_in_chromium(tmp_path: Path, runs: list[Path]):
    open_page = opener(tmp_path)
    page = tmp_path / "compare.html"
    shown = runner.invoke(app, ["bench", "--compare", *map(str, runs), "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    assert "USD/item | USD/right answer" in shown.output
    probed = tmp_path / "probed.html"
    html = page.read_text("utf-8").replace("</body>", PROBE + "</body>")
    # the copy lets its one inline script run; images stay under the page's own img-src data:
    html = html.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    probed.write_text(html, "utf-8")
    dom = open_page(probed, tmp_path / "pareto.png", size="1280,3200")
    keep_screenshot(tmp_path / "pareto.png", "bench-pareto.png")
    for plot in ("pareto-tokens", "pareto-usd"):
        tag = re.search(rf'<img[^>]*id="{plot}"[^>]*>', dom)
        assert tag, plot
        width = re.search(r'data-natural-width="(\d+)"', tag.group(0))
        assert width and int(width.group(1)) > 0, plot  # present and decoded by the browser
    table = re.search(r'<table id="pareto">(.*?)</table>', dom, re.S)
    assert table
    front = {
        name: tokens == "on the front"
        for name, tokens in re.findall(
            r'<tr><td>([^<]+)</td>.*?<td class="front-tokens">([^<]*)</td>', table.group(1)
        )
    }
    assert front == {"toolmad": True, "mad": True, "selfcons": False}
    text, _ = visible(table.group(0))
    assert "selfcons sc-cot 50.0" in text and "$0.00600" in text  # tool-mad's USD per item


def test_without_a_price_for_every_run_only_the_tokens_plot_is_drawn(tmp_path: Path):
    a = synthetic_run(tmp_path / "a", "tool-mad", right=8, tokens=25_000)
    b = synthetic_run(tmp_path / "b", "mad", right=6, tokens=6_000, model="q:unknown")
    page = tmp_path / "c.html"
    shown = runner.invoke(app, ["bench", "--compare", str(a), str(b), "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    html = page.read_text("utf-8")
    assert 'id="pareto-tokens"' in html and 'id="pareto-usd"' not in html
    assert "USD: not every run is priced" in html
    priced = runner.invoke(
        app,
        ["bench", "--compare", str(a), str(b), "--html", str(page), "--price", "q:unknown=1,1"],
    )
    assert priced.exit_code == 0, priced.output
    assert 'id="pareto-usd"' in page.read_text("utf-8")  # a price set later counts
