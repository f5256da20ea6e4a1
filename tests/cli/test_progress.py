"""Progress lines when output is not a terminal: done, rate, time left, at a steady interval."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.cli.progress import ProgressLines
from tests.bounded import COMMAND_GUARD_S

runner = CliRunner()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_lines_say_done_rate_eta_and_the_note() -> None:
    clock, sink = Clock(), io.StringIO()
    with ProgressLines("cot on scifact", sink, every=3600, clock=clock) as lines:
        lines.update(0, 20, "acc 0.0%")
        clock.now += 120
        lines.update(4, 20, "acc 75.0%")
        assert lines.line() == (
            "cot on scifact: 4/20 items (20%) · elapsed 0:02:00 · 2.00 items/min · "
            "ETA 0:08:00 · acc 75.0%"
        )
    printed = sink.getvalue().splitlines()
    assert (
        printed[0]
        == "cot on scifact: 0/20 items (0%) · elapsed 0:00:00 · ? items/min · ETA ? · acc 0.0%"
    )
    assert printed[-1].startswith("cot on scifact: 4/20 items (20%) · elapsed 0:02:00")
    assert len(printed) == 2  # the opening line and the closing one; the interval never came


def test_resumed_items_do_not_count_towards_the_rate() -> None:
    clock = Clock()
    lines = ProgressLines("x", io.StringIO(), clock=clock)
    lines.update(10, 20)  # 10 were done by an earlier process
    clock.now += 60
    lines.update(12, 20)
    assert "2.00 items/min · ETA 0:04:00" in lines.line()


def test_a_line_comes_every_interval_while_nothing_finishes() -> None:
    sink = io.StringIO()
    with ProgressLines("slow", sink, every=1.0) as lines:
        lines.update(0, 3)
        deadline = time.monotonic() + COMMAND_GUARD_S
        while sink.getvalue().count("\n") < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    printed = sink.getvalue().splitlines()
    assert len(printed) >= 3  # opening, two beats; no closing line repeating the same count
    assert all(line.startswith("slow: 0/3 items (0%) · elapsed ") for line in printed)


def test_no_closing_line_after_a_failure() -> None:
    sink = io.StringIO()
    with pytest.raises(RuntimeError), ProgressLines("x", sink, every=3600) as lines:
        lines.update(1, 2)
        raise RuntimeError("boom")
    assert len(sink.getvalue().splitlines()) == 1


@pytest.mark.parametrize("every", [0.5, 3601.0])
def test_interval_is_bounded(every: float) -> None:
    with pytest.raises(ValueError, match="progress interval must be within 1..3600 s"):
        ProgressLines("x", io.StringIO(), every=every)


def test_unknown_total_shows_a_count() -> None:
    lines = ProgressLines("scoring", io.StringIO(), unit="answers")
    lines.update(3)
    assert lines.line().startswith("scoring: 3 answers · elapsed ")


def test_bench_prints_progress_lines_when_not_a_terminal(tmp_path: Path, data_home, scripted):
    from factdebate.datasets import datasets_root

    if not (datasets_root("fever") / "fever").exists():
        pytest.skip(f"benchmark data not found at {datasets_root('fever')}")
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    args = ["bench", "--method", "cot", "--dataset", "fever-mini", "--limit", "3"]
    result = runner.invoke(
        app, [*args, "--model", name, "--out", str(tmp_path / "run"), "--progress-every", "1"]
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("cot on fever-mini: ")]
    assert lines[0].startswith("cot on fever-mini: 0/3 items (0%) · elapsed ")
    assert lines[-1].startswith("cot on fever-mini: 3/3 items (100%) · elapsed ")
    assert " calls · " in lines[-1] and "/min · finished" in lines[-1]  # a rate, or "?" if all
    # three ended before the first count


def test_progress_interval_outside_its_bounds_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "--out", str(tmp_path), "--progress-every", "0"])
    assert result.exit_code == 2 and "--progress-every" in result.output


def test_bench_pace_counts_only_items_finished_in_this_process():
    from factdebate.cli.progress import Pace

    now = [100.0]
    pace = Pace(clock=lambda: now[0])
    assert pace.update(5, 20) == "? items/min · ETA ?"  # resumed with 5 done
    now[0] += 120.0
    assert pace.update(7, 20) == "1.00 items/min · ETA 0:13:00"  # 2 new items in 2 min
    now[0] += 3480.0
    assert pace.update(8, 10) == "0.05 items/min · ETA 0:40:00"
    assert pace.update(10, 10).endswith("items/min · finished")  # not "0:00:00 left"
    assert Pace(clock=lambda: now[0]).update(3, 3) == "? items/min · finished"  # all done before


# --------------------------------------------------------------------------- live counts


def test_the_meter_counts_each_call_as_it_ends(scripted) -> None:
    """Calls made inside ``metering`` (any task) are counted when each one ends, not per item."""
    import asyncio

    from factdebate.cli.progress import metering

    _, model = scripted([], default="Reasoning.\n**SUPPORTS**")

    async def two_calls() -> None:
        await model.ainvoke("first question")
        await asyncio.gather(asyncio.create_task(model.ainvoke("second question")))

    with metering() as meter:
        asyncio.run(two_calls())
    assert meter.calls == 2
    assert meter.tokens == 2 * (2 + 2)  # word counts in and out, as the scripted model reports
    assert meter.seconds_per_call() is not None
    asyncio.run(two_calls())  # outside the block: not counted
    assert meter.calls == 2


def timed(role: str, tokens_in: int, tokens_out: int, started: float, ended: float) -> object:
    from factdebate.tools.models.call_clock import TimedCall

    return TimedCall(role, tokens_in, tokens_out, started, ended)


def paced_book(seconds_per_output_token: float = 0.1) -> object:
    """A pace book for ``local`` that has seen calls of 100 tokens in and 20 out."""
    from factdebate.runs.pace import PaceBook

    book = PaceBook()
    for n in range(10):
        out = 20 + n  # calls of several lengths, so both rates are fitted
        book.add_call("local", "debater", 100, out, out * seconds_per_output_token + 1.0)
    return book


def test_a_line_shows_calls_and_tokens_while_an_item_runs() -> None:
    from factdebate.cli.progress import CallMeter, ItemPace, _live_counts

    clock = Clock()
    meter = CallMeter(clock, paced_book())  # type: ignore[arg-type]
    meter.model = "local"
    means = {"per_role": {"debater": {"llm_calls": 4, "input_tokens": 400, "output_tokens": 80},
                          "total": {"llm_calls": 4}}}  # fmt: skip
    item = ItemPace("local", means, meter.book)
    per_item = item.seconds()
    assert per_item is not None and 11.0 < per_item < 13.0  # 4 calls of about 3 s
    base = {"calls": 10, "tokens": 500, "done": 1, "total": 3, "first_done": 1}
    live = lambda: _live_counts(meter, base, item, clock)  # noqa: E731
    sink = io.StringIO()
    lines = ProgressLines("tool-mad on x", sink, every=3600, clock=clock, live=live)
    lines.update(1, 3, "acc 100.0%")
    assert lines.line().endswith(
        f"acc 100.0% · 10 calls · 500 tok · about 0:00:{round(2 * per_item):02d} left"
    )
    answer = type("R", (), {"generations": [[type("G", (), {"message": None})()]]})()
    for _ in range(2):  # two calls of the running item end, 3 s each
        meter.on_llm_end(answer)
        meter.on_timed_call(timed("debater", 100, 20, clock.now, clock.now + 3.0))  # type: ignore[arg-type]
        clock.now += 3.0
    shown = lines.line()
    assert " · 12 calls · 500 tok · 3.0 s/call · " in shown
    clock.now += 100  # a call runs long: s/call counts finished calls only
    assert " · 3.0 s/call · " in lines.line()
    left = round(2 * item.seconds() - 6.0)  # type: ignore[operator]
    assert shown.endswith(f"about 0:00:{left:02d} left")  # two items less the calls made
    base.update(done=3)
    assert lines.line().endswith("3.0 s/call · finished")  # a finished run says so


def test_the_forecast_uses_the_best_means_and_this_machines_pace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from factdebate.cli.progress import CallMeter, bench_progress, forecast, remember_pace
    from factdebate.runs.pace import read_book

    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path))
    assert forecast("tool-mad", "openai:gpt-4o-mini", 3) is None  # not a local model
    first = forecast("tool-mad", "local", 3)
    assert first is not None and "about 28.5 model calls an item" in first
    assert "no call of local was timed on this machine yet" in first
    clock = Clock()
    meter = CallMeter(clock, paced_book())  # type: ignore[arg-type]
    meter.model = "local"
    for n in range(6):  # one verify of cot: 6 calls, 100 tokens in, 20 out, 3 s each
        meter.on_timed_call(timed("debater", 100, 20, 10.0 * n, 10.0 * n + 3.0))  # type: ignore[arg-type]
    remember_pace("local", meter, "cot", {}, 1)
    book = read_book(tmp_path)
    assert book.knows("local") and book.means("cot on local") is not None
    said = forecast("cot", "local", 2)
    assert said is not None and said.startswith("expected time on local: 0:00:36 for 2 item(s)")
    assert "about 6 model calls an item (means from this machine's runs of cot on local" in said
    with bench_progress("cot on x", 3600, "acc", "cot", {"model": "local"}) as progress:
        progress(1, 3, 1.0, 6, 720)  # one item done by an earlier process: 2 left
    printed = capsys.readouterr().err.splitlines()
    assert printed[0].startswith("expected time on local: 0:00:36 for 2 item(s)")
    assert printed[1].startswith("cot on x: 1/3 items (33%)")
    assert printed[1].endswith("acc 100.0% · 6 calls · 720 tok · about 0:00:36 left")


def test_a_repeats_line_counts_the_whole_run(tmp_path: Path, data_home, scripted) -> None:
    from factdebate.bench.judging.scoring import llm_calls, read_results
    from factdebate.datasets import datasets_root

    if not (datasets_root("fever") / "fever").exists():
        pytest.skip(f"benchmark data not found at {datasets_root('fever')}")
    name, _ = scripted([], default="Reasoning.\n**SUPPORTS**")
    args = ["bench", "--method", "cot", "--dataset", "fever-mini", "--limit", "2", "--repeats", "2"]
    out = tmp_path / "run"
    result = runner.invoke(app, [*args, "--model", name, "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("cot on fever-mini: ")]
    calls = sum(llm_calls(r) for f in out.rglob("results.jsonl") for r in read_results(f))
    assert calls == 4
    assert lines[-1].startswith("cot on fever-mini: 4/4 items (100%)")
    assert f"acc 100.0% · {calls} calls · " in lines[-1] or f" · {calls} calls · " in lines[-1]


def test_the_last_line_comes_once() -> None:
    """A beat that already printed the final count is not followed by the same line again."""
    sink = io.StringIO()
    with ProgressLines("indexing into 'c'", sink, every=1.0, unit="documents") as lines:
        lines.update(0, 2)
        lines.update(2, 2, "2 passages")
        deadline = time.monotonic() + COMMAND_GUARD_S
        while "2/2" not in sink.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    printed = sink.getvalue().splitlines()
    assert sum("2/2 documents" in line for line in printed) == 1, printed


def test_calls_made_elsewhere_show_from_the_finished_items(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """bench --server: the calls happen on the server, so the rows' counts are shown."""
    from factdebate.cli.progress import bench_progress

    with bench_progress("cot on x", 3600, "acc", "cot", {"model": "openai:m"}) as progress:
        progress(0, 2, 0.0, 0, 0)
        progress(1, 2, 1.0, 7, 300)
    printed = capsys.readouterr().err.splitlines()
    assert printed[-1].startswith("cot on x: 1/2 items (50%)")
    assert printed[-1].endswith("acc 100.0% · 7 calls · 300 tok")
