"""Progress on stderr: a live bar on a terminal, else one plain line at a steady interval."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import fields, is_dataclass
from types import TracebackType
from typing import IO, Any

from factdebate.cli.console import err
from factdebate.tools.core.errors import FactDebateError, SettingsError

MIN_EVERY_S = 1.0
MAX_EVERY_S = 3600.0
DEFAULT_EVERY_S = 10.0


def clock_text(seconds: float) -> str:
    """``H:MM:SS`` of a duration in seconds."""
    left = max(0, round(seconds))
    return f"{left // 3600}:{left % 3600 // 60:02d}:{left % 60:02d}"


class Pace:
    """Rate and time left of a run, from the items finished since this process started.

    Rich's own estimate looks at the last 30 s only, which says nothing when one item takes
    minutes; items already done when a run resumes do not count towards the rate.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, unit: str = "items") -> None:
        self._clock = clock
        self._start = clock()
        self._first_done: int | None = None
        self._unit = unit

    def update(self, done: int, total: int) -> str:
        """Return ``'R items/min · ETA H:MM:SS'`` (``'ETA ?'`` until an item finishes)."""
        if self._first_done is None:
            self._first_done, self._start = done, self._clock()
        finished = done - self._first_done
        elapsed = self._clock() - self._start
        if finished <= 0 or elapsed <= 0:
            return f"? {self._unit}/min · ETA ?"
        per_s = finished / elapsed
        left = max(0, total - done) / per_s
        return f"{per_s * 60:.2f} {self._unit}/min · ETA {clock_text(left)}"


class ProgressLines:
    """Write ``LABEL: DONE/TOTAL UNIT (P%) · elapsed · rate · ETA · NOTE`` lines to a stream.

    For output that is not a terminal (a log file, CI), where a progress bar prints nothing:
    one line when the work starts, one every ``every`` seconds from a background thread (so a
    slow item still shows the run is alive), and one when it ends. Use it as a context manager;
    call ``update`` as work finishes.
    """

    def __init__(
        self,
        label: str,
        stream: IO[str],
        every: float = DEFAULT_EVERY_S,
        unit: str = "items",
        clock: Callable[[], float] = time.monotonic,
        live: Callable[[], str] | None = None,
    ) -> None:
        if not MIN_EVERY_S <= every <= MAX_EVERY_S:
            raise SettingsError(
                f"progress interval must be within {MIN_EVERY_S:g}..{MAX_EVERY_S:g} s, got {every}"
            )
        self._label, self._stream, self._every, self._unit = label, stream, every, unit
        self._clock, self._live = clock, live
        self._printed: tuple[int, int | None, str] | None = None  # the state last printed
        self._started = clock()
        self._pace = Pace(clock, unit)
        self._state: tuple[int, int | None, str] | None = None
        self._rate = ""  # rate and time left as of the latest count (a beat does not decay it)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="progress-lines", daemon=True)

    def line(self) -> str:
        """The progress line for the latest state."""
        with self._lock:
            state, rate = self._state, self._rate
        done, total, note = state if state is not None else (0, None, "")
        parts = [f"{self._label}: {done}"]
        if total:
            parts[0] += f"/{total} {self._unit} ({done / total:.0%})"
        else:
            parts[0] += f" {self._unit}"
        parts.append(f"elapsed {clock_text(self._clock() - self._started)}")
        if rate:
            parts.append(rate)
        if note:
            parts.append(note)
        if self._live is not None and (now := self._live()):
            parts.append(now)
        return " · ".join(parts)

    def update(self, done: int, total: int | None = None, note: str = "") -> None:
        """Record the work done so far; the first call prints the opening line."""
        rate = self._pace.update(done, total) if total else ""
        with self._lock:
            first = self._state is None
            self._state, self._rate = (done, total, note), rate
        if first:
            self._emit()

    def _emit(self) -> None:
        with self._lock:
            self._printed = self._state
        self._stream.write(self.line() + "\n")
        self._stream.flush()

    def _beat(self) -> None:
        while not self._stop.wait(self._every):
            self._emit()

    def __enter__(self) -> ProgressLines:
        """Start the steady lines."""
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the steady lines; print the last state when the work completed.

        Not when the last line printed already showed that state: the last line comes once.
        """
        self._stop.set()
        self._thread.join()
        if kind is None and self._state is not None and self._state != self._printed:
            self._emit()


Tracker = Callable[[int, int | None, str], None]
"""``track(done, total, note)``: report work done so far (see ``track_progress``)."""


def _bar(eta: bool = True) -> Any:
    """A stderr progress bar: description, bar, done/total and (``eta``) rich's time left."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns: list[Any] = [
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if eta:
        columns.append(TimeRemainingColumn())
    return Progress(*columns, console=err)


class _LiveColumn:
    """A progress-bar column showing ``live()`` at every refresh (not only when work ends)."""

    def __init__(self, live: Callable[[], str]) -> None:
        from rich.progress import ProgressColumn
        from rich.text import Text

        class Column(ProgressColumn):
            def render(self, task: Any) -> Text:
                return Text(live())

        self.column = Column()


@contextmanager
def track_progress(
    label: str, every: float, unit: str = "items", live: Callable[[], str] | None = None
) -> Iterator[Tracker]:
    """Progress on stderr: a live bar on a terminal, else a plain line every ``every`` seconds.

    Yields ``track(done, total, note)``; rich's bar prints nothing when stderr is a log file or
    CI, so there the lines say done/total, rate, time left and ``note``. ``live()``, when
    given, is read at every line or refresh: counts that move while an item runs.
    """
    if not err.is_terminal:
        with ProgressLines(label, err.file, every, unit, live=live) as lines:
            yield lines.update
        return
    pace = Pace(unit=unit)
    with _bar(eta=False) as bar:
        if live is not None:
            bar.columns = (*bar.columns, _LiveColumn(live).column)
        task = bar.add_task(label, total=None)

        def track(done: int, total: int | None = None, note: str = "") -> None:
            rate = pace.update(done, total) if total else ""
            shown = " · ".join(part for part in (label, note, rate) if part)
            bar.update(task, completed=done, total=total, description=shown)

        yield track


class CallMeter:
    """Counts chat-model calls and their tokens as each call ends, from any task or thread."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.calls, self.tokens = 0, 0
        self.started = clock()
        self.first_at: float | None = None
        self._clock = clock
        self._lock = threading.Lock()

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        """Count one finished call and its tokens (usage reported by the model, else none)."""
        used = 0
        for batch in getattr(response, "generations", None) or []:
            for generation in batch:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
                if usage:
                    used += int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        with self._lock:
            self.calls += 1
            self.tokens += used
            if self.first_at is None:
                self.first_at = self._clock()

    def seconds_per_call(self) -> float | None:
        """Wall seconds per finished call so far (None before the first call ends)."""
        with self._lock:
            calls = self.calls
        if not calls:
            return None
        return (self._clock() - self.started) / calls


_METER: ContextVar[Any] = ContextVar("factdebate_call_meter", default=None)
_hooked: list[bool] = []


def _handler(meter: CallMeter) -> Any:
    """A LangChain callback handler reporting each finished call to ``meter``."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Handler(BaseCallbackHandler):
        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            meter.on_llm_end(response)

    return Handler()


@contextmanager
def metering(clock: Callable[[], float] = time.monotonic) -> Iterator[CallMeter]:
    """A ``CallMeter`` that every chat-model call made inside the block reports to."""
    from langchain_core.tracers.context import register_configure_hook  # ~2 s: only when run

    if not _hooked:
        register_configure_hook(_METER, inheritable=True)
        _hooked.append(True)
    meter = CallMeter(clock)
    token = _METER.set(_handler(meter))
    try:
        yield meter
    finally:
        _METER.reset(token)


PACE_FILE = "pace.json"
"""Under the data home: seconds per model call measured on this machine, by model."""
MIN_CALLS_RECORDED = 3


def is_local(model: str) -> bool:
    """Whether a model setting runs on this machine (the embedded model, a GGUF, a moderator)."""
    return model == "local" or model.startswith(("hf:", "hf-local:"))


def calls_per_item(method: str) -> float | None:
    """Mean model calls of one item of ``method`` from its measured runs (None: not measured)."""
    from factdebate.bench.judging.estimate import measured_means

    try:
        total = measured_means(method)["per_role"]["total"]["llm_calls"]
    except (FactDebateError, KeyError, TypeError, ValueError, OSError):
        return None
    return float(total) if total else None


def recorded_pace(model: str) -> float | None:
    """Seconds per call of ``model`` measured by an earlier run on this machine, or None."""
    from factdebate.tools.core.home import home_dir

    try:
        known = json.loads((home_dir() / PACE_FILE).read_text(encoding="utf-8"))
        value = known[model]["seconds_per_call"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) and value > 0 else None


def remember_pace(model: str, meter: CallMeter) -> None:
    """Keep this run's seconds per call of a local ``model`` for the next run's forecast."""
    from factdebate.tools.core.files import write_atomic
    from factdebate.tools.core.home import data_home

    pace = meter.seconds_per_call()
    if not is_local(model) or pace is None or meter.calls < MIN_CALLS_RECORDED:
        return
    path = data_home() / PACE_FILE
    try:
        known = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        known = known if isinstance(known, dict) else {}
        known[model] = {"seconds_per_call": round(pace, 3), "calls": meter.calls}
        write_atomic(path, json.dumps(known, indent=1, sort_keys=True))
    except (OSError, ValueError):  # a read-only home: the next run measures again
        return


def forecast(method: str, model: str, items: int) -> str | None:
    """What a run on a local model should take, said before it starts (None: not local).

    Calls per item are the method's measured means; seconds per call are this machine's, as
    an earlier run measured them, else the line says the time follows from the first calls.
    """
    if not is_local(model) or items <= 0:
        return None
    per_item = calls_per_item(method)
    pace = recorded_pace(model)
    calls = f"about {per_item:g} model calls an item ({method}'s measured mean)" if per_item else ""
    if per_item and pace:
        left = clock_text(per_item * items * pace)
        return (
            f"expected time on {model}: {left} for {items} item(s): {calls}, at {pace:.1f} s a "
            "call as measured on this machine"
        )
    if per_item:
        return (
            f"expected on {model}: {calls} for {items} item(s); the time follows from the first "
            "calls (no pace recorded on this machine yet)"
        )
    if pace:
        return (
            f"{model} takes about {pace:.1f} s a call on this machine; calls per item of {method} "
            "are not measured"
        )
    return None


def _live_counts(
    meter: CallMeter, base: dict[str, int], per_item: float | None, clock: Callable[[], float]
) -> str:
    """Calls and tokens so far, counted as each call ends; then s/call and the time left.

    Calls made elsewhere (``bench --server``) reach no meter here: the finished items' own
    counts (``rows_calls``, ``rows_tokens``) are shown when they are higher.
    """
    calls = max(base["calls"] + meter.calls, base.get("rows_calls", 0))
    tokens = max(base["tokens"] + meter.tokens, base.get("rows_tokens", 0))
    parts = [f"{calls} calls · {tokens} tok"]
    pace = meter.seconds_per_call()
    if pace is not None:
        parts.append(f"{pace:.1f} s/call")
        if per_item and base["total"]:
            expected = per_item * (base["total"] - base["done"])
            parts.append(f"about {clock_text(max(0.0, expected - meter.calls) * pace)} left")
    return " · ".join(parts)


BenchProgress = Callable[[int, int, float, int, int], None]
"""``progress(done, total, accuracy, calls, tokens)``, as the bench runner reports."""


def _settings_of(context: Any) -> dict[str, Any]:
    """A run's settings as a mapping (a settings dict, or a ``Context`` object's fields)."""
    if is_dataclass(context) and not isinstance(context, type):
        return {f.name: getattr(context, f.name) for f in fields(context)}
    return dict(context)


def _before_run(method: str, context: Any, items: int) -> None:
    """The line said before a run on a local model starts: the time it should take."""
    if note := forecast(method, run_model(context), items):
        err.print(note, markup=False, soft_wrap=True)


@contextmanager
def bench_progress(
    label: str, every: float, score: str, method: str, context: Any
) -> Iterator[BenchProgress]:
    """Progress of a bench run: ``SCORE P%`` per finished item, calls and tokens as they end.

    Before the first item on a local model, a line says how long the run should take.
    """
    model = run_model(context)
    clock = time.monotonic
    per_item = calls_per_item(method)
    base = {"calls": 0, "tokens": 0, "done": 0, "total": 0}
    started: list[bool] = []
    with metering(clock) as meter:

        def live() -> str:
            return _live_counts(meter, base, per_item, clock) if started else ""

        with track_progress(label, every, live=live) as track:

            def progress(done: int, total: int, accuracy: float, calls: int, tokens: int) -> None:
                if not started:  # what earlier processes did: the meter counts from here
                    base.update(calls=calls, tokens=tokens, done=done, total=total)
                    _before_run(method, context, total - done)
                    started.append(True)
                base.update(total=total, rows_calls=calls, rows_tokens=tokens)
                track(done, total, f"{score} {accuracy:.1%}")

            yield progress
        remember_pace(model, meter)


@contextmanager
def timed_run(method: str, context: Any, items: int = 1) -> Iterator[CallMeter]:
    """A run outside bench (``verify``): its notes before it, its pace kept after it."""
    _before_run(method, context, items)
    with metering() as meter:
        yield meter
    remember_pace(run_model(context), meter)


def run_model(context: Any) -> str:
    """The model a run's settings name for every role (``--model``, else FACTDEBATE_MODEL)."""
    import os

    settings = _settings_of(context)
    return str(settings.get("model") or os.environ.get("FACTDEBATE_MODEL") or "local")
