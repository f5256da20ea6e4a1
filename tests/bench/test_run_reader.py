"""The run-folder reader: fields within bounds, damaged lines named, files never written."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench.judging.scoring import read_results
from factdebate.bench.running.results import repair_results
from factdebate.runs.reader import (
    RunReadError,
    read_metrics,
    read_result_rows,
    read_run_info,
)
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.files import read_bounded

GOOD = {
    "id": "a",
    "gold": "SUPPORTS",
    "prediction": "REFUTES",
    "cost": {"total": {"llm_calls": 3, "input_tokens": 10, "output_tokens": 5}},
    "latency_s": 0.5,
    "result": {"transcript": [{"round": 1, "label": "REFUTES", "answer_relevance": 0.7}]},
}


def write_lines(path: Path, *lines: str) -> bytes:
    path.write_text("".join(lines), encoding="utf-8")
    return path.read_bytes()


def row(**changes: Any) -> str:
    return json.dumps({**GOOD, **changes}) + "\n"


def test_rows_out_of_bounds_are_named_by_line_and_the_file_is_untouched(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    turn = {"round": 1, "faithfulness": 1.5}
    before = write_lines(
        path,
        row(),
        row(id=""),  # 2: an empty id
        row(id="c", latency_s=-1),  # 3
        row(id="d", cost={"total": {"llm_calls": True}}),  # 4: a bool is not a count
        row(id="e", result={"transcript": [turn]}),  # 5: faithfulness above 1
        row(id="f", gold=["x"]),  # 6: an answer list in a label run
        row(id="g", prediction=None),
        '["a list"]\n',  # 8
        row(id="a"),  # 9: a repeated id
        '{"id": "h", "gold": "SUP',  # 10: torn
    )
    found = read_result_rows(path, "labels")
    assert [r["id"] for r in found.rows] == ["a", "g"]
    assert [p.line for p in found.problems] == [2, 3, 4, 5, 6, 8, 9, 10]
    whys = [str(p) for p in found.problems]
    assert whys[0].startswith(f"{path}:2: id")
    assert "repeats the id 'a' of line 1" in whys[6] and "torn last line" in whys[7]
    with pytest.raises(RunReadError, match=r"8 damaged row\(s\).*and 3 more"):
        found.checked(False)
    assert found.checked(True) == found.rows
    assert [r["id"] for r in read_results(path)] == ["a", "g"]
    assert path.read_bytes() == before


def test_answer_rows_hold_lists_and_task_comes_from_gold_when_not_given(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    write_lines(
        path,
        row(gold=["Paris"], prediction=["Paris", "Lyon"]),
        row(id="b", gold=["Paris"], prediction="SUPPORTS"),
        row(id="c", gold=["Paris"], prediction=None, exact_match=2.0),
    )
    found = read_result_rows(path)
    assert [r["id"] for r in found.rows] == ["a"]
    assert "prediction must be a list of answers" in str(found.problems[0])
    assert "exact_match" in str(found.problems[1])
    assert read_result_rows(path, "labels").rows == []


def test_resume_repairs_its_own_file_and_reading_never_does(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    good = row()
    before = write_lines(path, good, good, row(id="b", latency_s=float("nan")), '{"id": "c", "go')
    assert [r["id"] for r in read_results(path)] == ["a"]
    assert path.read_bytes() == before
    assert [r["id"] for r in repair_results(path)] == ["a"]
    assert path.read_text(encoding="utf-8") == good  # b and c run again when resumed
    write_lines(path, good.rstrip("\n"))  # a whole last row without its newline
    assert [r["id"] for r in repair_results(path)] == ["a"]
    assert path.read_text(encoding="utf-8") == good


def test_run_and_metrics_files_are_checked(tmp_path: Path) -> None:
    run = {"method": "cot", "dataset": "scifact", "limit": 3, "seed": 0, "context": {}}
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    assert read_run_info(tmp_path).limit == 3
    metrics = {
        "n": 2,
        "accuracy": 0.5,
        "cost": {
            "llm_calls": 2,
            "input_tokens": 4,
            "output_tokens": 2,
            "per_item": {"llm_calls": 1, "input_tokens": 2.0, "output_tokens": 1.0},
        },
        "latency": {"mean_s": 0.1},
        "extra": {"kept": True},
    }
    (tmp_path / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    read = read_metrics(tmp_path)
    assert read.as_dict()["extra"] == {"kept": True} and read.as_dict()["n"] == 2
    (tmp_path / "metrics.json").write_text(json.dumps({**metrics, "accuracy": None}), "utf-8")
    with pytest.raises(RunReadError, match="need accuracy"):
        read_metrics(tmp_path)
    (tmp_path / "metrics.json").write_text('{"n": Infinity}', encoding="utf-8")
    with pytest.raises(RunReadError, match="metrics file .*: n:"):
        read_metrics(tmp_path)


def within(seconds: float, call: Any) -> BaseException | None:
    """Run ``call`` in a thread; what it raised, or fail when it is still running (a hang)."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # the test inspects what was raised
            raised.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the read waited on a special file"
    return raised[0] if raised else None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path, monkeypatch) -> None:
    fifo = tmp_path / "prices.toml"
    os.mkfifo(fifo)
    raised = within(10, lambda: read_bounded(fifo, 100, "prices file"))
    assert isinstance(raised, SettingsError) and "not a regular file" in str(raised)
    raised = within(10, lambda: read_bounded(Path("/dev/zero"), 100, "table"))
    assert isinstance(raised, SettingsError) and "not a regular file" in str(raised)
    monkeypatch.setenv("FACTDEBATE_PRICES", str(fifo))
    from factdebate.bench.judging.prices import load_prices

    raised = within(10, load_prices)
    assert isinstance(raised, SettingsError) and str(fifo) in str(raised)
    results = tmp_path / "run"
    results.mkdir()
    os.mkfifo(results / "results.jsonl")
    os.mkfifo(results / "metrics.json")
    raised = within(10, lambda: read_result_rows(results / "results.jsonl"))
    assert isinstance(raised, RunReadError)
    raised = within(10, lambda: read_metrics(results))
    assert isinstance(raised, RunReadError)


def test_plot_text_is_literal() -> None:
    from factdebate.bench.judging.report import literal_text

    @literal_text
    def draw(name: str) -> bool:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot as plt

        fig, ax = plt.subplots()
        title = ax.set_title(name)
        fig.canvas.draw()  # mathtext would fail on this name here
        plt.close(fig)
        return bool(title.get_parse_math())

    assert draw("a$\\frac$b") is False
    assert draw("p$x^2$") is False


def test_a_cosine_one_float_step_past_one_is_a_real_score() -> None:
    # Identical vectors give a cosine of 1.0000000000000002: a row written so is not damaged.
    from factdebate.runs.reader import Turn

    assert Turn.model_validate({"round": 1, "answer_relevance": 1.0000000000000002})
