"""This machine's pace of model calls: seconds per input and output token, per model and role.

One pace model stands behind every time the CLI says (``verify``'s announced time, the progress
line, ``bench --estimate``). Each answered call adds its tokens and its wall seconds to decayed
sums kept per model and role (and for the model's roles pooled), from which seconds per input
token and per output token are fitted (least squares through the origin; a call's weight halves
after ``HALF_LIFE_CALLS`` later calls, so the pace follows a machine that got busier). A run
also leaves its calls and tokens per item by role, per method, model and call-changing settings
(decayed the same way per item), so the next run of the same command is forecast from what this
machine's model really did. Everything is kept in ``pace.json`` under the data home.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

PACE_FILE = "pace.json"
VERSION = 2
HALF_LIFE_CALLS = 30.0
"""Later calls of the same model and role after which a call's weight has halved."""
HALF_LIFE_ITEMS = 5.0
"""Later items of the same method after which an item's calls and tokens weigh half."""
MIN_WEIGHT = 2.0
"""Decayed calls a role needs before its own fit is used (else the model's pooled one)."""
POOLED = "*"
MAX_PACE_BYTES = 1024**2
MAX_ENTRIES = 256
"""Models, and method entries, kept at most (the least used are dropped first)."""
KEYS = ("llm_calls", "input_tokens", "output_tokens")


def clock_text(seconds: float) -> str:
    """``H:MM:SS`` of a duration in seconds."""
    left = max(0, round(seconds))
    return f"{left // 3600}:{left % 3600 // 60:02d}:{left % 60:02d}"


def _decay(half_life: float) -> float:
    return math.pow(0.5, 1.0 / half_life)


@dataclass
class RolePace:
    """Decayed sums of one role's calls: enough to fit ``seconds = a * in + b * out``."""

    w: float = 0.0
    s: float = 0.0
    ii: float = 0.0
    io: float = 0.0
    oo: float = 0.0
    i_s: float = 0.0
    o_s: float = 0.0
    t: float = 0.0  # decayed tokens (in + out), for the one-rate fallback

    def add(self, tokens_in: int, tokens_out: int, seconds: float) -> None:
        """Count one call after decaying the earlier ones."""
        d = _decay(HALF_LIFE_CALLS)
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) * d)
        x, y = float(tokens_in), float(tokens_out)
        self.w += 1.0
        self.s += seconds
        self.ii += x * x
        self.io += x * y
        self.oo += y * y
        self.i_s += x * seconds
        self.o_s += y * seconds
        self.t += x + y

    def per_token(self) -> tuple[float, float] | None:
        """Seconds per input token and per output token (None before any call with tokens)."""
        if self.w <= 0 or self.t <= 0:
            return None
        det = self.ii * self.oo - self.io * self.io
        if det > 1e-6 * self.ii * self.oo and self.ii > 0 and self.oo > 0:
            a = (self.i_s * self.oo - self.o_s * self.io) / det
            b = (self.o_s * self.ii - self.i_s * self.io) / det
            if a >= 0 and b >= 0:
                return a, b
            if a < 0 <= self.o_s:  # the prompt's share is within noise: all time is output
                return 0.0, self.o_s / self.oo
            if b < 0 <= self.i_s:
                return self.i_s / self.ii, 0.0
        rate = self.s / self.t  # calls all alike: one rate per token fits them
        return rate, rate

    def seconds(self, tokens_in: float, tokens_out: float) -> float | None:
        """Predicted seconds of a call (or of a sum of calls) with these tokens."""
        fit = self.per_token()
        if fit is None:
            return None
        return fit[0] * tokens_in + fit[1] * tokens_out


@dataclass
class MethodMeans:
    """Decayed per-item means by role of one method on one model with one set of settings."""

    weight: float
    per_role: dict[str, dict[str, float]]
    other_s: float = 0.0
    """Wall seconds of an item spent outside model calls (loading, retrieval, scoring)."""

    def add(
        self, per_role: Mapping[str, Mapping[str, float]], items: int, other_s: float = 0.0
    ) -> None:
        """Fold in ``items`` items: their summed calls and tokens by role, and other seconds."""
        if items <= 0:
            return
        old = self.weight * math.pow(_decay(HALF_LIFE_ITEMS), items)
        total = old + items
        self.other_s = (self.other_s * old + max(0.0, other_s)) / total
        mine, theirs = self.per_role, per_role
        self.per_role = {
            role: {
                k: (mine.get(role, {}).get(k, 0.0) * old + theirs.get(role, {}).get(k, 0.0)) / total
                for k in KEYS
            }
            for role in set(mine) | set(theirs)
        }
        self.weight = total


class PaceBook:
    """Every model's role paces and every method's per-item means known on this machine."""

    def __init__(
        self,
        models: dict[str, dict[str, RolePace]] | None = None,
        methods: dict[str, MethodMeans] | None = None,
    ) -> None:
        self.models = models or {}
        self.methods = methods or {}

    def add_call(
        self, model: str, role: str, tokens_in: int, tokens_out: int, seconds: float
    ) -> None:
        """Count one answered call of ``model`` for ``role`` that took ``seconds``."""
        if seconds <= 0 or tokens_in + tokens_out <= 0:
            return
        roles = self.models.setdefault(model, {})
        for name in (role, POOLED):
            roles.setdefault(name, RolePace()).add(tokens_in, tokens_out, seconds)

    def role_pace(self, model: str, role: str) -> RolePace | None:
        """The pace to forecast ``role``'s calls with: its own once known, else the pooled one."""
        roles = self.models.get(model) or {}
        own = roles.get(role)
        if own is not None and own.w >= MIN_WEIGHT:
            return own
        pooled = roles.get(POOLED)
        return pooled if pooled is not None and pooled.per_token() is not None else None

    def seconds(self, model: str, per_role: Mapping[str, Mapping[str, float]]) -> float | None:
        """Seconds that calls with these tokens by role take on ``model`` (None: no pace known)."""
        total = 0.0
        for role, usage in per_role.items():
            if role == "total":
                continue
            pace = self.role_pace(model, role)
            said = (
                None
                if pace is None
                else pace.seconds(usage.get("input_tokens", 0.0), usage.get("output_tokens", 0.0))
            )
            if said is None:
                return None
            total += said
        return total

    def knows(self, model: str) -> bool:
        """Whether any call of ``model`` was timed."""
        pooled = (self.models.get(model) or {}).get(POOLED)
        return pooled is not None and pooled.per_token() is not None

    def add_means(
        self,
        key: str,
        per_role: Mapping[str, Mapping[str, float]],
        items: int,
        other_s: float = 0.0,
    ) -> None:
        """Fold a run of ``items`` items into ``key``'s means (``other_s``: outside calls)."""
        entry = self.methods.setdefault(key, MethodMeans(0.0, {}))
        entry.add(per_role, items, other_s)

    def means(self, key: str) -> MethodMeans | None:
        """The per-item means learned for ``key`` (``means_key``), if a run left them."""
        return self.methods.get(key)

    def to_json(self) -> dict[str, Any]:
        """What ``pace.json`` holds."""
        models = dict(sorted(self.models.items(), key=lambda m: -m[1][POOLED].w)[:MAX_ENTRIES])
        methods = dict(sorted(self.methods.items(), key=lambda m: -m[1].weight)[:MAX_ENTRIES])
        return {
            "version": VERSION,
            "models": {
                m: {r: {k: round(v, 6) for k, v in asdict(p).items()} for r, p in roles.items()}
                for m, roles in models.items()
            },
            "methods": {k: asdict(v) for k, v in methods.items()},
        }

    @classmethod
    def from_json(cls, data: Any) -> PaceBook:
        """A book from ``pace.json``'s contents; anything unreadable in it is left out."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return cls()
        book = cls()
        for model, roles in (data.get("models") or {}).items():
            if not isinstance(roles, dict):
                continue
            for role, sums in roles.items():
                try:
                    pace = RolePace(**{k: float(v) for k, v in sums.items()})
                except (TypeError, ValueError, AttributeError):
                    continue
                if all(math.isfinite(getattr(pace, f.name)) for f in fields(pace)) and pace.w >= 0:
                    book.models.setdefault(str(model), {})[str(role)] = pace
        for key, entry in (data.get("methods") or {}).items():
            try:
                per_role = {
                    str(r): {k: float(u.get(k, 0.0)) for k in KEYS}
                    for r, u in entry["per_role"].items()
                }
                other = float(entry.get("other_s", 0.0))
                weight = float(entry["weight"])
                if math.isfinite(other) and math.isfinite(weight):
                    book.methods[str(key)] = MethodMeans(weight, per_role, max(0.0, other))
            except (TypeError, ValueError, KeyError, AttributeError):
                continue
        return book


def means_key(method: str, model: str, signature: str) -> str:
    """The key of a method's learned means: method, model and its call-changing settings."""
    return f"{method} on {model}" + (f" with {signature}" if signature else "")


def read_book(home: Path) -> PaceBook:
    """The pace book under ``home`` (an empty one when there is none or it is unreadable)."""
    path = home / PACE_FILE
    try:
        if not path.is_file() or path.stat().st_size > MAX_PACE_BYTES:
            return PaceBook()
        return PaceBook.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return PaceBook()


def write_book(home: Path, book: PaceBook) -> None:
    """Keep ``book`` under ``home`` (atomic; a read-only home keeps nothing, silently)."""
    from factdebate.tools.core.files import write_atomic

    try:
        write_atomic(home / PACE_FILE, json.dumps(book.to_json(), indent=1, sort_keys=True))
    except OSError:
        return


class BusyClock:
    """Each call's share of the wall time, told in the order calls end.

    A call is given the time from its start, or from the end of the call that ended before
    it if that is later, to its end: with calls in flight together the shares add up to the
    wall time the calls kept busy, which is what a forecast of a run's time must add up to.
    """

    def __init__(self) -> None:
        self.last_end = -math.inf

    def share(self, started: float, ended: float) -> float:
        """The wall seconds this call adds (calls told in the order they ended)."""
        seconds = max(0.0, ended - max(started, self.last_end))
        self.last_end = max(self.last_end, ended)
        return seconds
