"""A bench run's call journal: one line per provider request, written as the request ends.

A result row holds the cost of its item's calls only once the item finishes; the requests of
an item a kill cut off (or of an earlier try a retry replaced) were paid for all the same. The
runner binds a sink per item try (``factdebate.tools.models.journal``), so each request lands
in ``calls.jsonl`` at once (flushed); on resume, the requests of tries that left no row are
folded into the run's cost totals, so they match what the provider saw.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from factdebate.tools.core.json_text import parse_json
from factdebate.tools.models import journal

log = logging.getLogger("factdebate")
JOURNAL = "calls.jsonl"
"""The run folder's call journal."""
ATTEMPT = "attempt"
"""The result-row key naming the item try whose requests the row's cost holds."""
MAX_JOURNAL_BYTES = 1 << 30
"""Largest journal read back (about 4 million requests); a larger one is left out, logged."""
MAX_LINE_CHARS = 4096
"""Longest journal line read back; a longer one is not an entry (skipped)."""
SENT, ANSWERED, REJECTED, FAILED = "sent", "answered", "rejected", "failed"
CHECK = "connection-check"
"""The attempt id of the tiny requests that check a run's models can be reached (no item)."""
"""Entry outcomes: ``sent`` as a request goes out, then one of the others as it ends."""


def new_attempt() -> str:
    """A fresh id for one try of one item."""
    return uuid.uuid4().hex[:16]


class CallJournal:
    """Appends one line per request to the journal file, flushed at once (thread-safe)."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        """Append one entry as one line."""
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()

    @contextlib.contextmanager
    def item(self, item_id: str, attempt: str) -> Iterator[None]:
        """Journal every request this context sends as ``item_id``'s try ``attempt``."""

        def sink(entry: dict[str, Any]) -> None:
            self.write({"item": item_id, ATTEMPT: attempt, **entry})

        token = journal.bind(sink)
        try:
            yield
        finally:
            journal.unbind(token)


def note_connection_checks(calls: CallJournal, count: int) -> None:
    """Journal ``count`` connection-check requests (one per remote model, before the items)."""
    for _ in range(count):
        calls.write({"item": "", ATTEMPT: CHECK, "role": "check", "outcome": ANSWERED})


@contextlib.contextmanager
def open_journal(path: Path) -> Iterator[CallJournal]:
    """The run folder's journal, open for appending for the block.

    A torn last line (a kill mid-write) is ended with a newline first, so the next entry
    starts a line of its own.
    """
    path = Path(path)
    torn = path.is_file() and path.stat().st_size > 0 and not _ends_in_newline(path)
    with path.open("a", encoding="utf-8") as handle:
        if torn:
            handle.write("\n")
            handle.flush()
        yield CallJournal(handle)


def _ends_in_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def _entries(path: Path) -> Iterator[dict[str, Any]]:
    """The journal's entries in order; a line that is not one (a torn last line) is skipped."""
    if not path.is_file():
        return
    size = path.stat().st_size
    if size > MAX_JOURNAL_BYTES:
        log.warning(
            "%s: %d bytes, over %d: its requests are not counted", path, size, MAX_JOURNAL_BYTES
        )
        return
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            entry = None
            if len(line) <= MAX_LINE_CHARS:
                with contextlib.suppress(json.JSONDecodeError):
                    entry = parse_json(line)
            if not isinstance(entry, dict) or "item" not in entry or ATTEMPT not in entry:
                log.warning("%s: line %d is not a journal entry (skipped)", path, number)
                continue
            yield entry


def _count(value: Any) -> int:
    """A whole non-negative count from an entry's field (0 when it holds none)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def unrowed_calls(path: Path, rows: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The requests of item tries that left no row in ``rows``; None when there are none.

    Returns ``{"cost": {role: usage, ..., "total": usage}, "items", "tries", "requests"}``,
    usage as a row's: ``llm_calls`` one per answered or failed call, ``rejected`` the attempts
    retried, tokens as the provider reported them. A request sent that never ended (in flight
    when the process was killed) counts as a call, its tokens unknown (0): the provider got it.
    ``requests`` counts every request sent for items; ``checks`` the connection checks (in
    ``cost`` under the role ``check``).
    """
    kept = {(str(r.get("id")), str(r.get(ATTEMPT))) for r in rows if r.get(ATTEMPT)}
    per_try: dict[tuple[str, str], dict[str, Counter[str]]] = {}
    for entry in _entries(Path(path)):
        key = (str(entry["item"]), str(entry[ATTEMPT]))
        if key in kept:
            continue
        outcome = str(entry.get("outcome"))
        usage = Counter(
            {
                "llm_calls": int(outcome in (ANSWERED, FAILED)),
                "rejected": int(outcome == REJECTED),
                "ended": int(outcome != SENT),
                "sent": int(outcome == SENT),
                "input_tokens": _count(entry.get("input_tokens")),
                "output_tokens": _count(entry.get("output_tokens")),
            }
        )
        roles = per_try.setdefault(key, {})
        for role in (str(entry.get("role") or "unknown"), "total"):
            roles.setdefault(role, Counter()).update(usage)
    cost: dict[str, Counter[str]] = {}
    requests = 0
    for roles in per_try.values():
        for role, counts in roles.items():
            cut = max(0, counts["sent"] - counts["ended"])  # sent, never ended: billed all the same
            cost.setdefault(role, Counter()).update(
                {
                    "llm_calls": counts["llm_calls"] + cut,
                    "rejected": counts["rejected"],
                    "input_tokens": counts["input_tokens"],
                    "output_tokens": counts["output_tokens"],
                }
            )
            if role == "total":
                requests += max(counts["sent"], counts["ended"])
    if not requests:
        return None
    checks = per_try.get(("", CHECK), {}).get("total", Counter())["ended"]
    tries = [key for key in per_try if key != ("", CHECK)]
    return {
        "cost": {role: dict(counts) for role, counts in cost.items()},
        "items": len({item for item, _ in tries}),
        "tries": len(tries),
        "requests": requests - checks,
        "checks": checks,
    }
