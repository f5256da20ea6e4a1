"""Progress on stderr: a live bar on a terminal, else one plain line at a steady interval."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import IO, Any

from factdebate.cli.console import err
from factdebate.tools.core.errors import SettingsError

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
    ) -> None:
        if not MIN_EVERY_S <= every <= MAX_EVERY_S:
            raise SettingsError(
                f"progress interval must be within {MIN_EVERY_S:g}..{MAX_EVERY_S:g} s, got {every}"
            )
        self._label, self._stream, self._every, self._unit = label, stream, every, unit
        self._clock = clock
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
        """Stop the steady lines; print the last state once more when the work completed."""
        self._stop.set()
        self._thread.join()
        if kind is None and self._state is not None:
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


@contextmanager
def track_progress(label: str, every: float, unit: str = "items") -> Iterator[Tracker]:
    """Progress on stderr: a live bar on a terminal, else a plain line every ``every`` seconds.

    Yields ``track(done, total, note)``; rich's bar prints nothing when stderr is a log file or
    CI, so there the lines say done/total, rate, time left and ``note``.
    """
    if not err.is_terminal:
        with ProgressLines(label, err.file, every, unit) as lines:
            yield lines.update
        return
    pace = Pace(unit=unit)
    with _bar(eta=False) as bar:
        task = bar.add_task(label, total=None)

        def track(done: int, total: int | None = None, note: str = "") -> None:
            rate = pace.update(done, total) if total else ""
            shown = " · ".join(part for part in (label, note, rate) if part)
            bar.update(task, completed=done, total=total, description=shown)

        yield track
