"""Damaged copies of a real run folder: every reading command leaves the bytes as they were.

Each command either refuses in one line or, told to skip damaged rows, says how many it
skipped and computes the rest (values checked by hand below).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench import compare_runs, load_run, run_frame
from factdebate.bench.judging.page import write_compare_page
from factdebate.cli import app
from factdebate.runs.reader import RunReadError
from tests.bench.test_calibration import RIGHT_RELEVANCE, WRONG_RELEVANCE, item, write_run
from tests.bench.test_runner import bench, make_data
from tests.reliability.bench_cli import one_line_error, runner

pytestmark = pytest.mark.usefixtures("data_home")


def digest(folder: Path) -> str:
    """Every path under ``folder`` and every file's bytes, as one hash."""
    found = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        found.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            found.update(path.read_bytes())
    return found.hexdigest()


@pytest.fixture
def real_run(tmp_path: Path, scripted) -> Path:
    """A finished CoT run on 4 fever-mini claims (gold S S R N, every verdict SUPPORTS)."""
    data = make_data(tmp_path / "data", "SSRN")
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    bench(tmp_path, data, name, concurrency=1, pages=False)
    return tmp_path / "run"


def lines_of(run: Path) -> list[str]:
    return (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def row_of(run: Path, item_id: str) -> dict[str, Any]:
    return next(json.loads(x) for x in lines_of(run) if json.loads(x)["id"] == item_id)


def replace_row(run: Path, item_id: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite the row of ``item_id`` (NaN allowed, as a careless writer would)."""
    out = []
    for line in lines_of(run):
        row = json.loads(line)
        if row["id"] == item_id:
            change(row)
            line = json.dumps(row) + "\n"
        out.append(line)
    (run / "results.jsonl").write_text("".join(out), encoding="utf-8")


def set_cost(row: dict[str, Any], calls: Any) -> None:
    row["cost"]["total"]["llm_calls"] = calls


def set_turn(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(row: dict[str, Any]) -> None:
        row["result"]["transcript"][0][key] = value

    return change


ROW_DAMAGE: dict[str, Callable[[Path], None]] = {
    "torn-last-line": lambda run: (run / "results.jsonl").write_text(
        "".join(lines_of(run)) + '{"id": "9", "go', encoding="utf-8"
    ),
    "line-without-id": lambda run: (run / "results.jsonl").write_text(
        "".join(lines_of(run)[:2]) + '{"gold": "SUPPORTS"}\n' + "".join(lines_of(run)[2:]),
        encoding="utf-8",
    ),
    "repeated-id": lambda run: (run / "results.jsonl").write_text(
        "".join(lines_of(run)) + json.dumps({**row_of(run, "0"), "prediction": "REFUTES"}) + "\n",
        encoding="utf-8",
    ),
    "negative-calls": lambda run: replace_row(run, "2", lambda r: set_cost(r, -10)),
    "fractional-calls": lambda run: replace_row(run, "2", lambda r: set_cost(r, 2.9)),
    "round-text": lambda run: replace_row(run, "2", set_turn("round", "abc")),
    "relevance-nan": lambda run: replace_row(run, "2", set_turn("answer_relevance", float("nan"))),
    "label-outside": lambda run: replace_row(run, "2", lambda r: r.update(prediction="MAYBE")),
}
SKIPS_ITEM_2 = {
    "negative-calls",
    "fractional-calls",
    "round-text",
    "relevance-nan",
    "label-outside",
}


@pytest.mark.parametrize("damage", sorted(ROW_DAMAGE))
def test_damaged_rows_are_refused_or_skipped_and_never_rewritten(
    damage: str, real_run: Path, tmp_path: Path
) -> None:
    clean = tmp_path / "clean"
    shutil.copytree(real_run, clean)
    ROW_DAMAGE[damage](real_run)
    before = digest(real_run)
    # load_run / run_frame: refused with the damaged line named, or skipped on request
    with pytest.raises(RunReadError, match=r"1 damaged row\(s\): .*results.jsonl:\d+"):
        load_run(real_run)
    with pytest.raises(RunReadError):
        run_frame(real_run)
    frame = run_frame(real_run, skip_bad_rows=True)
    kept = ["0", "1", "3"] if damage in SKIPS_ITEM_2 else ["0", "1", "2", "3"]
    assert list(frame["id"]) == kept
    # gold S S R N, every verdict SUPPORTS: right 1, 1, 0, 0 (the repeated id keeps line 1)
    assert frame["correct"].sum() == 2.0
    assert list(frame["prediction"]) == ["SUPPORTS"] * len(kept)
    # bench --compare: refused in one line, or compared with the skip said
    result = runner.invoke(app, ["bench", "--compare", str(real_run), str(clean)])
    one_line_error(result, "1 damaged row(s)")
    page = tmp_path / "compare.html"
    result = runner.invoke(
        app, ["bench", "--compare", str(real_run), str(clean), "--html", str(page)]
    )
    assert result.exit_code == 2 and not page.exists()
    table = compare_runs([real_run, clean], skip_bad_rows=True)
    assert "Note: run: skipped 1 damaged row(s)" in table
    assert table.count("| cot | fever-mini | 4 |") == 2  # metrics.json, from the run itself
    result = runner.invoke(
        app,
        ["bench", "--compare", str(real_run), str(clean), "--skip-bad-rows", "--html", str(page)],
    )
    assert result.exit_code == 0, result.output
    assert "skipped 1 damaged row(s)" in " ".join(result.output.split())
    assert "skipped 1 damaged row(s)" in page.read_text(encoding="utf-8")
    assert digest(real_run) == before


METRICS_DAMAGE: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "not-json": (lambda m: None, "not JSON"),
    "no-cost": (lambda m: {k: v for k, v in m.items() if k != "cost"}, "cost: Field required"),
    "a-list": (lambda m: [m], "metrics file"),
    "nan-accuracy": (lambda m: {**m, "accuracy": float("nan")}, "accuracy"),
    "text-count": (lambda m: {**m, "n": "4"}, "n: Input should be a valid integer"),
    "negative-calls": (
        lambda m: {**m, "cost": {**m["cost"], "llm_calls": -1}},
        "cost.llm_calls",
    ),
    "text-seed": (lambda m: {**m, "run": {**m["run"], "seed": "0"}}, "run.seed"),
    "negative-limit": (lambda m: {**m, "run": {**m["run"], "limit": -3}}, "run.limit"),
}


@pytest.mark.parametrize("damage", sorted(METRICS_DAMAGE))
def test_a_damaged_metrics_file_is_one_line_and_left_alone(
    damage: str, real_run: Path, tmp_path: Path
) -> None:
    change, message = METRICS_DAMAGE[damage]
    path = real_run / "metrics.json"
    changed = change(json.loads(path.read_text(encoding="utf-8")))
    path.write_text("{not json" if changed is None else json.dumps(changed), encoding="utf-8")
    before = digest(real_run)
    result = runner.invoke(app, ["bench", "--compare", str(real_run)])
    one_line_error(result, message)
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["bench", "--compare", str(real_run), "--html", str(page)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert digest(real_run) == before


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("seed", "0", "seed: Input should be a valid integer"),
        ("seed", -1, "seed: Input should be greater than or equal to 0"),
        ("limit", "3", "limit: Input should be a valid integer"),
        ("limit", -1, "limit: Input should be greater than or equal to 0"),
        ("method", "", "method: String should have at least 1 character"),
    ],
)
def test_a_damaged_run_file_stops_every_reader_in_one_line(
    key: str, value: Any, message: str, real_run: Path
) -> None:
    path = real_run / "run.json"
    path.write_text(
        json.dumps({**json.loads(path.read_text(encoding="utf-8")), key: value}), "utf-8"
    )
    before = digest(real_run)
    with pytest.raises(RunReadError, match=message) as raised:
        run_frame(real_run)
    assert "\n" not in str(raised.value)
    with pytest.raises(RunReadError, match=message):
        load_run(real_run)
    assert digest(real_run) == before


def tool_mad_run(folder: Path) -> Path:
    """The calibration test's Tool-MAD rows (relevance threshold 0.60 when all are read)."""
    rows = [item(f"r{i}", "REFUTES", "REFUTES", v) for i, v in enumerate(RIGHT_RELEVANCE)]
    rows += [item(f"w{i}", "SUPPORTS", "REFUTES", v) for i, v in enumerate(WRONG_RELEVANCE)]
    return write_run(folder, rows)


@pytest.mark.parametrize(
    "damage",
    [
        lambda row: row["result"]["transcript"][2].update(answer_relevance=float("nan")),
        lambda row: row["result"]["transcript"][2].update(round="abc"),
        lambda row: row["result"]["cost"]["total"].update(llm_calls=-10),
    ],
    ids=["relevance-nan", "round-text", "negative-calls"],
)
def test_calibrate_gate_refuses_damaged_rows_or_skips_them_when_told(
    damage: Callable[[dict[str, Any]], None], tmp_path: Path
) -> None:
    run = tool_mad_run(tmp_path / "run")
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[1])  # r1, the right item with relevance 0.60
    damage(row)
    lines[1] = json.dumps(row) + "\n"
    (run / "results.jsonl").write_text("".join(lines), encoding="utf-8")
    before = digest(run)
    out = tmp_path / "cal"
    result = runner.invoke(app, ["calibrate-gate", str(run), "--out", str(out)])
    one_line_error(result, "results.jsonl:2:")
    assert not out.exists()
    result = runner.invoke(app, ["calibrate-gate", str(run), "--out", str(out), "--skip-bad-rows"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "skipped 1 damaged row(s)" in text and "13 Tool-MAD items" in text
    # 9 right items x 3 agreements; keeping 0.9 of 27 loses at most 2: no item can go, so
    # the threshold is the lowest right relevance left, r0's 0.55 (0.60 with r1 read)
    assert "| relevance | 0.55 |" in result.output
    assert digest(run) == before


def test_a_run_folder_with_mathtext_in_its_name_compares_as_text(
    real_run: Path, tmp_path: Path
) -> None:
    from tests.chromium import opener, visible

    names = ["a$\\frac$b", "p$x^2$"]
    for name in names:
        shutil.copytree(real_run, tmp_path / name)
    before = [digest(tmp_path / name) for name in names]
    page = tmp_path / "compare.html"
    write_compare_page(page, [tmp_path / name for name in names])
    html = page.read_text(encoding="utf-8")
    text, _ = visible(html)
    assert all(name in text for name in names)
    assert [digest(tmp_path / name) for name in names] == before
    dom = opener(tmp_path)(page, tmp_path / "compare.png")
    shown, _ = visible(dom)
    assert all(f"{name} " in shown or f"{name}:" in shown for name in names)
