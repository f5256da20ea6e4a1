"""Pacing of provider requests shared by a whole process: rate buckets, AIMD concurrency, hang cuts.

Every request a process sends to one model endpoint (all roles, all items, all runs) passes
one ``Endpoint``: a requests bucket and a tokens bucket refilled continuously at the
per-minute limits (set, or learned from the provider's ``x-ratelimit-*`` headers), a
concurrency window that halves on a 429 and grows back by one per window of answers
(additive increase, multiplicative decrease), and a pause until a 429's ``Retry-After`` has
passed, which every caller of the endpoint waits out. ``langchain_core.rate_limiters``
paces requests only (no tokens, no learning, a polling loop), and the provider SDKs retry
each request on its own, so neither does this job; the models are built with the SDK's own
retries off (``max_retries=0``) so its attempts never multiply ours.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

TokenCount = Literal["cap", "used"]
Sleep = Callable[[float], Awaitable[None]]
CHARS_PER_TOKEN = 4
"""How providers estimate a prompt's tokens before they read it (OpenAI's rate limiter does)."""
PACE_SHARE = 0.95
"""Share of a limit paced for: the provider counts arrivals, which jitter about our sends."""
BURST_S = 1.0
"""Seconds of credit a bucket holds: a limit is spent evenly, never in a burst at the start."""
LATENCY_SAMPLES = 256
"""Recent answered latencies kept per endpoint and role, for the hang cut."""
MIN_LATENCY_SAMPLES = 16
"""Answers needed before the hang cut replaces the call timeout."""
HANG_PERCENTILE = 0.99
SLOW_START = 4
"""Requests in flight to an endpoint whose limits are unknown (neither set nor learned yet):
its first answers tell them, and the window grows by one per answer (slow start: it doubles
each round trip) until the first 429 or its ceiling. Once a limit is known the buckets pace
and the window opens. A small start keeps a first burst under a per-second limit: at 32, a
600-requests-a-minute account refused 11% of a 500-claim CoT run, all in its first second."""
MAX_ENDPOINTS = 1024
_clock: Callable[[], float] = time.monotonic


def now() -> float:
    """The pacing clock, seconds (monotonic; tests replace ``_clock``)."""
    return _clock()


@dataclass(frozen=True)
class Limits:
    """What one call asks of its endpoint's pacing (from the run's settings)."""

    rpm: int = 0
    """Requests per minute of the endpoint; 0 = learned from the provider's headers."""
    tpm: int = 0
    """Tokens per minute of the endpoint; 0 = learned from the provider's headers."""
    tpm_counts: TokenCount = "cap"
    """``cap``: a request costs its prompt plus its ``max_tokens`` (OpenAI); ``used``: what it
    really spent (the unused cap is given back when the answer comes)."""
    max_in_flight: int = 64
    """Most requests in flight to the endpoint at once (the concurrency window's ceiling)."""
    hang_cut_min_s: float = 20.0
    """Shortest hang cut, seconds."""
    hang_cut_factor: float = 4.0
    """The hang cut is this times the 99th percentile of recent latencies (within bounds)."""


@dataclass(frozen=True)
class PacingStats:
    """Process-wide counters of provider requests, for progress lines and reports."""

    requests_sent: int = 0
    answered: int = 0
    rate_limited: int = 0
    """429s seen."""
    server_errors: int = 0
    """5xx answers and other transient faults seen (not 429s, not cut hangs)."""
    retried: int = 0
    """Attempts that failed and were tried again."""
    failed_calls: int = 0
    """Calls that ended without an answer."""
    hangs_cut: int = 0
    """Requests cut by the hang deadline."""
    in_flight: int = 0
    waiting: int = 0
    """Calls waiting for a concurrency slot or rate credit now."""
    wait_s: float = 0.0
    """Seconds calls spent waiting for rate credit or a Retry-After pause, summed."""


class _Counters:
    """The mutable side of ``PacingStats`` (one per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: dict[str, float] = dict.fromkeys(PacingStats.__dataclass_fields__, 0)

    def add(self, **deltas: float) -> None:
        with self.lock:
            for name, delta in deltas.items():
                self.values[name] += delta

    def frozen(self) -> PacingStats:
        with self.lock:
            values = dict(self.values)
        ints = {k: int(v) for k, v in values.items() if k != "wait_s"}
        return PacingStats(**ints, wait_s=float(values["wait_s"]))


_COUNTERS = _Counters()


def snapshot() -> PacingStats:
    """The process's request counters now."""
    return _COUNTERS.frozen()


def count(**deltas: float) -> None:
    """Add to the process's request counters (``failed_calls=1``, ``retried=1``...)."""
    _COUNTERS.add(**deltas)


class Bucket:
    """Credit refilled continuously at ``per_minute / 60`` a second, holding ``BURST_S`` of it.

    A reservation may take the level below zero; the one who made it waits until the level
    is back at zero, so callers are served in the order they reserved, without polling.
    """

    def __init__(self, per_minute: float = 0.0) -> None:
        self.rate = 0.0
        self.capacity = 0.0
        self.level = 0.0
        self.stamp = now()
        self.per_minute(per_minute)

    def per_minute(self, value: float) -> None:
        """Set the limit (0 = none); a new limit starts with a full bucket."""
        rate = max(0.0, value) * PACE_SHARE / 60.0
        if rate == self.rate:
            return
        self.rate, self.capacity = rate, max(1.0, rate * BURST_S)
        self.level, self.stamp = self.capacity, now()

    def _refill(self, at: float) -> None:
        if at > self.stamp:
            self.level = min(self.capacity, self.level + (at - self.stamp) * self.rate)
        self.stamp = max(self.stamp, at)

    def wait_for(self, amount: float, at: float) -> float:
        """Seconds until the level covers ``amount`` (0 with no limit), without reserving it.

        ``amount`` may exceed the capacity: the reservation then leaves a debt that later
        callers wait out, so the limit holds on average.
        """
        if self.rate <= 0:
            return 0.0
        self._refill(at)
        return max(0.0, (amount - self.level) / self.rate)

    def take(self, amount: float, at: float) -> None:
        """Reserve ``amount`` (the level may go below zero)."""
        if self.rate > 0:
            self._refill(at)
            self.level -= amount

    def give(self, amount: float, at: float) -> None:
        """Return ``amount`` (a cap not spent, an estimate too high; negative: charge more)."""
        if self.rate > 0:
            self._refill(at)
            self.level = min(self.capacity, self.level + amount)

    def at_most(self, remaining: float, at: float) -> None:
        """Lower the level to what the provider says remains."""
        if self.rate > 0:
            self._refill(at)
            self.level = min(self.level, remaining)


class Window:
    """A concurrency limit that halves on a 429 and grows back (AIMD), across event loops.

    It starts at ``SLOW_START`` and grows by one per answer until the first 429 (slow start),
    then by one per window of answers.
    """

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = float(min(SLOW_START, self.ceiling))
        self.slow_start = True
        self.in_flight = 0
        self.next_cut = 0.0
        self.lock = threading.Lock()
        self.waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    def set_ceiling(self, ceiling: int) -> None:
        """Change the most requests in flight (a lower one applies from the next admission)."""
        with self.lock:
            self.ceiling = max(1, ceiling)
            self.limit = min(self.limit, float(self.ceiling))
        self._wake()

    async def enter(self) -> None:
        """Wait for a slot."""
        with self.lock:
            if self.in_flight < int(self.limit) and not self.waiters:
                self.in_flight += 1
                return
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            self.waiters.append((loop, future))
        try:
            await future
        except asyncio.CancelledError:
            with self.lock:
                try:
                    self.waiters.remove((loop, future))
                    granted = False
                except ValueError:
                    granted = future.done() and not future.cancelled()
            if granted:
                self.leave()
            raise

    def leave(self) -> None:
        """Give a slot back."""
        with self.lock:
            self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand free slots to the waiters, oldest first."""
        while True:
            with self.lock:
                if not self.waiters or self.in_flight >= int(self.limit):
                    return
                loop, future = self.waiters.popleft()
                self.in_flight += 1
            try:
                loop.call_soon_threadsafe(self._grant, future)
            except RuntimeError:  # that loop is closed: the slot goes back
                with self.lock:
                    self.in_flight -= 1

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.done():  # cancelled meanwhile: the slot goes to the next
            self.leave()
        else:
            future.set_result(None)

    def open(self) -> None:
        """End the slow start: the limits are known, the buckets pace from here."""
        with self.lock:
            self.slow_start = False
            self.limit = float(self.ceiling)
        self._wake()

    def grow(self) -> None:
        """One answer came: the limit grows by one per window of answers."""
        with self.lock:
            if self.limit < self.ceiling:
                step = 1.0 if self.slow_start else 1.0 / self.limit
                self.limit = min(float(self.ceiling), self.limit + step)
        self._wake()

    def shrink(self, at: float, settle_s: float) -> None:
        """A 429 came: halve the limit, at most once per ``settle_s`` (the 429s of one burst)."""
        with self.lock:
            self.slow_start = False
            if at >= self.next_cut:
                self.limit = max(1.0, self.limit / 2)
                self.next_cut = at + settle_s


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def duration(text: str) -> float | None:
    """Seconds in an OpenAI reset header (``"1s"``, ``"6m0s"``, ``"20ms"``), or None."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def _number(headers: Mapping[str, Any], name: str) -> float | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(str(raw).strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


class Endpoint:
    """The pacing of one model endpoint in this process."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.lock = threading.Lock()
        self.requests = Bucket()
        self.tokens = Bucket()
        self.window = Window(Limits().max_in_flight)
        self.paused_until = 0.0
        self.learned_rpm = 0.0
        self.learned_tpm = 0.0
        self.latencies: dict[str, deque[float]] = {}

    def _apply(self, limits: Limits) -> None:
        """Take a call's settings: set limits win over learned ones."""
        rpm, tpm = limits.rpm or self.learned_rpm, limits.tpm or self.learned_tpm
        self.requests.per_minute(rpm)
        self.tokens.per_minute(tpm)
        if limits.max_in_flight != self.window.ceiling:
            self.window.set_ceiling(limits.max_in_flight)
        if (rpm or tpm) and self.window.slow_start:
            self.window.open()

    async def admit(self, limits: Limits, tokens: float, until: float, sleep: Sleep) -> bool:
        """Wait for a slot and rate credit for one request of ``tokens``; False past ``until``.

        On True the caller holds a slot and must call ``done`` once the request ends.
        """
        count(waiting=1)
        try:
            await self.window.enter()
        finally:
            count(waiting=-1)
        with self.lock:
            self._apply(limits)
            at = now()
            wait = max(
                self.paused_until - at,
                self.requests.wait_for(1, at),
                self.tokens.wait_for(tokens, at),
                0.0,
            )
            if at + wait > until:  # the limit needs longer than the call may wait
                self.window.leave()
                return False
            # Reserved now, waited out after: later callers queue behind this one.
            self.requests.take(1, at)
            self.tokens.take(tokens, at)
        if wait > 0:
            count(waiting=1, wait_s=wait)
            try:
                await sleep(wait)
            except BaseException:
                self.window.leave()
                raise
            finally:
                count(waiting=-1)
        count(requests_sent=1, in_flight=1)
        return True

    def done(
        self,
        *,
        limits: Limits,
        role: str,
        prompt_estimate: int,
        cap: int,
        started: float,
        answered: bool,
        status: int | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        headers: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
        hang: bool = False,
    ) -> None:
        """One admitted request ended: settle tokens, learn from headers, adjust the window."""
        at = now()
        with self.lock:
            if headers is not None:
                headers = {str(k).lower(): v for k, v in headers.items()}
                self._learn(headers, at, at - started, answered)
                self._apply(limits)  # a limit just learned paces the next request
                self._remaining(headers, at, at - started)
            if answered:
                if input_tokens or output_tokens:
                    out = max(cap, output_tokens) if limits.tpm_counts == "cap" else output_tokens
                    self.tokens.give(prompt_estimate + cap - input_tokens - out, at)
                samples = self.latencies.setdefault(role, deque(maxlen=LATENCY_SAMPLES))
                samples.append(at - started)
            if status == 429:
                self.paused_until = max(self.paused_until, at + (retry_after or 0.0))
        count(in_flight=-1)
        if answered:
            count(answered=1)
            self.window.grow()
        elif status == 429:
            count(rate_limited=1)
            self.window.shrink(at, settle_s=max(self.median_latency(role), 0.05))
        elif hang:
            count(hangs_cut=1)
        elif status is None or status >= 500:
            count(server_errors=1)
        self.window.leave()

    def abandon(self) -> None:
        """An admitted request was cancelled by its caller: only its slot is given back."""
        count(in_flight=-1)
        self.window.leave()

    def _learn(self, headers: Mapping[str, Any], at: float, elapsed: float, answer: bool) -> None:
        """Limits the provider reports (``x-ratelimit-limit-*``).

        An answer without a limit header forgets the limit learned before (the endpoint
        lifted it, or another server now listens at that address).
        """
        for kind in ("requests", "tokens"):
            limit = _number(headers, f"x-ratelimit-limit-{kind}")
            if limit is not None or answer:
                if kind == "requests":
                    self.learned_rpm = limit or 0.0
                else:
                    self.learned_tpm = limit or 0.0

    def _remaining(self, headers: Mapping[str, Any], at: float, elapsed: float) -> None:
        """Lower the buckets to the credit the provider says remains.

        ``x-ratelimit-remaining-*`` counts from when the request arrived, ``elapsed`` ago.
        """
        for bucket, kind in ((self.requests, "requests"), (self.tokens, "tokens")):
            remaining = _number(headers, f"x-ratelimit-remaining-{kind}")
            if remaining is not None and bucket.rate > 0:
                bucket.at_most(remaining + bucket.rate * elapsed, at)

    def median_latency(self, role: str) -> float:
        """Median of the recent answered latencies of ``role`` (0 when none)."""
        with self.lock:
            samples = sorted(self.latencies.get(role, ()))
        return samples[len(samples) // 2] if samples else 0.0

    def hang_cut(self, limits: Limits, role: str, timeout: float) -> float:
        """How long one attempt may run: ``timeout``, or the hang cut from recent latencies."""
        with self.lock:
            samples = sorted(self.latencies.get(role, ()))
        if len(samples) < MIN_LATENCY_SAMPLES:
            return timeout
        high = samples[min(len(samples) - 1, int(HANG_PERCENTILE * len(samples)))]
        return min(timeout, max(limits.hang_cut_min_s, high * limits.hang_cut_factor))


_ENDPOINTS: OrderedDict[str, Endpoint] = OrderedDict()
_REGISTRY_LOCK = threading.Lock()


def endpoint(key: str) -> Endpoint:
    """The pacing of endpoint ``key`` (made on first use; the least recently used go first)."""
    with _REGISTRY_LOCK:
        found = _ENDPOINTS.get(key)
        if found is None:
            found = _ENDPOINTS[key] = Endpoint(key)
            while len(_ENDPOINTS) > MAX_ENDPOINTS:
                _ENDPOINTS.popitem(last=False)
        else:
            _ENDPOINTS.move_to_end(key)
        return found


_URL_FIELDS = ("openai_api_base", "anthropic_api_url", "base_url", "api_base", "endpoint_url")
_NAME_FIELDS = ("model_name", "model", "model_id")


def endpoint_key(model: Any) -> str:
    """Which endpoint a chat model talks to: its URL and model name.

    An object without a URL is its own endpoint, so scripted test models never share limits.
    """
    base = getattr(model, "bound", model)
    url = next((str(v) for f in _URL_FIELDS if (v := getattr(base, f, None))), "")
    name = next((str(v) for f in _NAME_FIELDS if (v := getattr(base, f, None))), "")
    if not url:
        return f"{type(base).__name__}#{id(base)}:{name}"
    return f"{url.rstrip('/')}|{name}"


def prompt_tokens(texts: list[str]) -> int:
    """A prompt's tokens as a provider estimates them before reading it (characters / 4)."""
    return math.ceil(sum(len(t) for t in texts) / CHARS_PER_TOKEN)


def reset() -> None:
    """Forget every endpoint and zero the counters (tests)."""
    with _REGISTRY_LOCK:
        _ENDPOINTS.clear()
    with _COUNTERS.lock:
        for name in _COUNTERS.values:
            _COUNTERS.values[name] = 0
