"""Progress on stderr: a live bar on a terminal, else one plain line at a steady interval."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import fields, is_dataclass
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from factdebate.cli.console import err
from factdebate.runs.pace import BusyClock, PaceBook, clock_text, means_key, read_book, write_book
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.home import home_dir

if TYPE_CHECKING:
    from factdebate.tools.models.call_clock import TimedCall

MIN_EVERY_S = 1.0
MAX_EVERY_S = 3600.0
DEFAULT_EVERY_S = 10.0


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
            return f"? {self._unit}/min · " + ("finished" if done >= total else "ETA ?")
        per_s = finished / elapsed
        if done >= total:
            return f"{per_s * 60:.2f} {self._unit}/min · finished"
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
    """Counts chat-model calls and their tokens as each call ends, from any task or thread.

    Calls told by the call clock (every call through ``llm``) also bring their role and wall
    times: each one's share of the wall time (``BusyClock``) goes to ``book``, the pace model,
    and to this run's totals by role.
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, book: PaceBook | None = None
    ) -> None:
        self.calls, self.tokens = 0, 0
        self.started = clock()
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.model = ""
        self.book = book if book is not None else PaceBook()
        self.timed, self.busy_s = 0, 0.0
        self.per_role: dict[str, dict[str, float]] = {}
        self._busy = BusyClock()
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
            self.last_at = self._clock()
            if self.first_at is None:
                self.first_at = self.last_at

    def on_timed_call(self, call: TimedCall) -> None:
        """Add one answered call's wall share to the pace model and this run's role totals."""
        with self._lock:
            share = self._busy.share(call.started, call.ended)
            self.timed += 1
            self.busy_s += share
            role = self.per_role.setdefault(call.role, dict.fromkeys(PACE_KEYS, 0.0))
            role["llm_calls"] += 1
            role["input_tokens"] += call.input_tokens
            role["output_tokens"] += call.output_tokens
            if self.model:
                self.book.add_call(
                    self.model, call.role, call.input_tokens, call.output_tokens, share
                )

    def elapsed(self) -> float:
        """Wall seconds since the meter started."""
        return self._clock() - self.started

    def seconds_per_call(self) -> float | None:
        """Wall seconds per finished call (None before the first call ends).

        Only finished calls count: the busy time the timed calls took, else the time from the
        start to the last call that ended; a call still running adds nothing until it ends.
        """
        with self._lock:
            if self.timed:
                return self.busy_s / self.timed
            if not self.calls or self.last_at is None:
                return None
            return (self.last_at - self.started) / self.calls


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
def metering(
    clock: Callable[[], float] = time.monotonic, model: str = "", book: PaceBook | None = None
) -> Iterator[CallMeter]:
    """A ``CallMeter`` that every chat-model call made inside the block reports to.

    With ``model`` named, the timed calls feed ``book`` (the pace model) for that model.
    """
    from langchain_core.tracers.context import register_configure_hook  # ~2 s: only when run

    if not _hooked:
        register_configure_hook(_METER, inheritable=True)
        _hooked.append(True)
    from factdebate.tools.models import call_clock

    meter = CallMeter(clock, book)
    meter.model = model
    token = _METER.set(_handler(meter))
    timed = call_clock.bind(meter.on_timed_call)
    try:
        yield meter
    finally:
        call_clock.unbind(timed)
        _METER.reset(token)


PACE_KEYS = ("llm_calls", "input_tokens", "output_tokens")
MIN_CALLS_RECORDED = 3
"""Timed calls a run needs before its pace and its calls per item are kept."""
PRIOR_ITEMS = 2.0
"""How many items the forecast per item weighs against the items this run has finished."""


def is_local(model: str) -> bool:
    """Whether a model setting runs on this machine (the embedded model, a GGUF, a moderator)."""
    return model == "local" or model.startswith(("hf:", "hf-local:"))


def item_means(method: str, model: str, context: Any) -> dict[str, Any] | None:
    """Calls and tokens by role expected of one item (``expected_means``; None: unknown)."""
    from factdebate.bench.judging.estimate import expected_means

    try:
        return expected_means(method, model, _settings_of(context))
    except (FactDebateError, KeyError, TypeError, ValueError, OSError):
        return None


class ItemPace:
    """Seconds one item should take: the pace model over the expected calls and tokens."""

    def __init__(self, model: str, means: dict[str, Any] | None, book: PaceBook) -> None:
        self.model, self.means, self.book = model, means, book

    @property
    def calls(self) -> float:
        """Expected model calls of one item (0 when unknown)."""
        if self.means is None:
            return 0.0
        return float(self.means["per_role"].get("total", {}).get("llm_calls", 0.0))

    def seconds(self) -> float | None:
        """Expected wall seconds of one item at the pace known now (None: not known).

        The model calls at this machine's pace, plus what earlier runs of the method spent
        outside them (loading, retrieval, scoring), when they left it.
        """
        if self.means is None:
            return None
        calls = self.book.seconds(self.model, self.means["per_role"])
        return None if calls is None else calls + float(self.means.get("other_s", 0.0))


def forecast(
    method: str, model: str, items: int, context: Any = None, book: PaceBook | None = None
) -> str | None:
    """What a run on a local model should take, said before it starts (None: not local).

    Calls and tokens per item are the best means known (``expected_means``); seconds follow
    from the pace model (``factdebate.runs.pace``) of this machine's earlier calls.
    """
    if not is_local(model) or items <= 0:
        return None
    book = book if book is not None else read_book(home_dir())
    item = ItemPace(model, item_means(method, model, context or {}), book)
    if item.means is None:
        return None
    what = f"about {item.calls:.3g} model calls an item (means from {item.means['source']})"
    seconds = item.seconds()
    if seconds is None:
        return (
            f"expected on {model}: {what} for {items} item(s); no call of {model} was timed "
            "on this machine yet, so the progress line gives the time once the first calls end"
        )
    return (
        f"expected time on {model}: {clock_text(seconds * items)} for {items} item(s): {what}, "
        "at this machine's pace of recent calls"
    )


def remember_pace(model: str, meter: CallMeter, method: str, context: Any, items: int) -> None:
    """Keep this run's timed calls and its calls per item (local models) for the next forecast."""
    from factdebate.bench.judging.estimate import calls_signature
    from factdebate.tools.core.home import data_home

    if not is_local(model) or meter.timed < MIN_CALLS_RECORDED:
        return
    if items > 0 and meter.per_role:
        key = means_key(method, model, calls_signature(method, _settings_of(context)))
        other = max(0.0, meter.elapsed() - meter.busy_s)
        meter.book.add_means(key, meter.per_role, items, other)
    write_book(data_home(), meter.book)


def _live_counts(
    meter: CallMeter, base: dict[str, Any], item: ItemPace | None, clock: Callable[[], float]
) -> str:
    """Calls and tokens so far, counted as each call ends; then s/call and the time left.

    Calls made elsewhere (``bench --server``) reach no meter here: the finished items' own
    counts (``rows_calls``, ``rows_tokens``) are shown when they are higher. The time left is
    the items left at the expected seconds an item (the pace model's forecast, moved towards
    the wall time this run's finished items took), less the time since the last one finished.
    """
    calls = max(base["calls"] + meter.calls, base.get("rows_calls", 0))
    tokens = max(base["tokens"] + meter.tokens, base.get("rows_tokens", 0))
    parts = [f"{calls} calls · {tokens} tok"]
    pace = meter.seconds_per_call()
    if pace is not None:
        parts.append(f"{pace:.1f} s/call")
    total, done = base["total"], base["done"]
    if total and done >= total:
        parts.append("finished")
        return " · ".join(parts)
    per_item = item.seconds() if item is not None else None
    done_here = done - base.get("first_done", done)
    since = meter.started
    if done_here > 0 and meter.timed > 0:  # items of this run whose calls were timed
        seen = (base.get("at_done", since) - base.get("first_at", meter.started)) / done_here
        prior = PRIOR_ITEMS if per_item is not None else 0.0
        per_item = ((per_item or 0.0) * prior + seen * done_here) / (prior + done_here)
    if per_item is not None and total:
        running = max(0.0, clock() - base.get("at_done", since))
        parts.append(f"about {clock_text(max(0.0, (total - done) * per_item - running))} left")
    return " · ".join(parts)


BenchProgress = Callable[[int, int, float, int, int], None]
"""``progress(done, total, accuracy, calls, tokens)``, as the bench runner reports."""


def _settings_of(context: Any) -> dict[str, Any]:
    """A run's settings as a mapping (a settings dict, or a ``Context`` object's fields)."""
    if is_dataclass(context) and not isinstance(context, type):
        return {f.name: getattr(context, f.name) for f in fields(context)}
    return dict(context)


def _before_run(method: str, context: Any, items: int, book: PaceBook | None = None) -> None:
    """The line said before a run on a local model starts: the time it should take."""
    if note := forecast(method, run_model(context), items, context, book):
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
    book = read_book(home_dir())
    item = ItemPace(model, item_means(method, model, context), book)
    base: dict[str, Any] = {"calls": 0, "tokens": 0, "done": 0, "total": 0}
    started: list[bool] = []
    with metering(clock, model, book) as meter:
        faults = fault_counts()

        def live() -> str:
            if not started:
                return ""
            return " · ".join(p for p in (_live_counts(meter, base, item, clock), faults()) if p)

        with track_progress(label, every, live=live) as track:

            def progress(done: int, total: int, accuracy: float, calls: int, tokens: int) -> None:
                if not started:  # what earlier processes did: the meter counts from here
                    base.update(calls=calls, tokens=tokens, done=done, total=total)
                    base["first_done"], base["first_at"] = done, clock()
                    base["at_done"] = base["first_at"]
                    _before_run(method, context, total - done, book)
                    started.append(True)
                if done != base["done"]:
                    base["at_done"] = clock()
                base.update(total=total, done=done, rows_calls=calls, rows_tokens=tokens)
                track(done, total, f"{score} {accuracy:.1%}")

            yield progress
        remember_pace(model, meter, method, context, base["done"] - base.get("first_done", 0))


def fault_counts() -> Callable[[], str]:
    """A function giving the provider's 429s, retries, failed calls and cut hangs since now.

    Counted by the process's pacing as each request ends; only the counts above zero are
    named ("" when none), so a run without faults shows nothing more.
    """
    from factdebate.tools.models.pacing import snapshot

    start = snapshot()

    def text() -> str:
        now = snapshot()
        counts = (
            (now.rate_limited - start.rate_limited, "429s"),
            (now.retried - start.retried, "retried"),
            (now.failed_calls - start.failed_calls, "failed calls"),
            (now.hangs_cut - start.hangs_cut, "hangs cut"),
        )
        return " · ".join(f"{n} {what}" for n, what in counts if n > 0)

    return text


@contextmanager
def timed_run(method: str, context: Any, items: int = 1) -> Iterator[CallMeter]:
    """A run outside bench (``verify``): its forecast before it, its pace kept after it."""
    model = run_model(context)
    book = read_book(home_dir())
    _before_run(method, context, items, book)
    with metering(model=model, book=book) as meter:
        yield meter
    remember_pace(model, meter, method, context, items)


def run_model(context: Any) -> str:
    """The model a run's settings name for every role (``--model``, else FACTDEBATE_MODEL)."""
    import os

    settings = _settings_of(context)
    return str(settings.get("model") or os.environ.get("FACTDEBATE_MODEL") or "local")
