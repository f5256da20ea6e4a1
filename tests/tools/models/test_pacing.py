"""Pacing against a rate-limited fake provider: limits kept, faults retried, requests billed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from factdebate.nodes.context import Context
from factdebate.nodes.policy import served
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.records import add_costs
from factdebate.tools.models import journal, llm, pacing
from factdebate.tools.models.pacing import Bucket, Limits, Window
from factdebate.tools.models.providers import resolve_model
from tests.fake_provider import Behaviour, by_kind, fake_provider


@pytest.fixture(autouse=True)
def fresh_pacing():
    """Each test starts with no endpoint state and zero counters."""
    pacing.reset()
    yield
    pacing.reset()


def site(**kw: Any) -> llm.CallSite:
    return llm.CallSite(role="debater", agent="a", stage="argue", max_tokens=40, **kw)


async def ask_many(model: Any, count: int, call_site: llm.CallSite) -> list[llm.Reply]:
    return list(await asyncio.gather(*(llm.ask(model, f"p{i}", call_site) for i in range(count))))


def billed(replies: list[llm.Reply]) -> int:
    """Requests the replies' cost rows account for: calls plus rejected attempts."""
    total: dict[str, Any] = {}
    for reply in replies:
        total = add_costs(total, reply.cost)
    row = total.get("total", {})
    return int(row.get("llm_calls", 0)) + int(row.get("rejected", 0))


def test_a_bucket_paces_a_little_under_the_limit():
    assert Bucket(per_minute=600).rate == pytest.approx(10 * pacing.PACE_SHARE)
    assert 0.9 <= pacing.PACE_SHARE < 1


def test_bucket_reserves_in_order_and_waits_out_its_debt(monkeypatch):
    monkeypatch.setattr(pacing, "PACE_SHARE", 1.0)
    monkeypatch.setattr(pacing, "_clock", lambda: 0.0)
    bucket = Bucket(per_minute=600)  # 10 a second, holding one second of credit
    assert bucket.capacity == 10
    for _ in range(10):
        assert bucket.wait_for(1, 0.0) == 0
        bucket.take(1, 0.0)
    assert bucket.wait_for(1, 0.0) == pytest.approx(0.1)
    bucket.take(1, 0.0)
    assert bucket.wait_for(1, 0.0) == pytest.approx(0.2)  # behind the one already waiting
    assert bucket.wait_for(1, 0.2) == pytest.approx(0.0)
    bucket.give(5, 0.2)
    assert bucket.level == pytest.approx(6.0)


def test_a_request_larger_than_the_bucket_leaves_a_debt_instead_of_waiting_forever(monkeypatch):
    monkeypatch.setattr(pacing, "PACE_SHARE", 1.0)
    monkeypatch.setattr(pacing, "_clock", lambda: 0.0)
    bucket = Bucket(per_minute=600)
    assert bucket.wait_for(25, 0.0) == pytest.approx(1.5)
    bucket.take(25, 0.0)
    assert bucket.wait_for(1, 1.5) == pytest.approx(0.1)


async def test_the_window_starts_small_and_doubles_per_window_until_the_first_429():
    window = Window(256)
    assert window.limit == pacing.SLOW_START
    for _ in range(pacing.SLOW_START):
        window.grow()
    assert window.limit == 2 * pacing.SLOW_START
    window.shrink(at=10.0, settle_s=1.0)
    assert window.limit == pacing.SLOW_START and not window.slow_start


async def test_known_limits_open_the_window_at_once(monkeypatch):
    monkeypatch.setattr(pacing, "_clock", lambda: 0.0)
    point = pacing.endpoint("known")
    assert point.window.limit == min(pacing.SLOW_START, Limits().max_in_flight)
    limits = Limits(rpm=600, max_in_flight=100)

    async def sleep(seconds: float) -> None:
        return None

    assert await point.admit(limits, 0, until=10, sleep=sleep)
    assert point.window.limit == 100 and not point.window.slow_start


async def test_the_window_halves_on_429s_once_per_burst_and_grows_back():
    window = Window(8)
    window.limit = 8.0
    window.shrink(at=10.0, settle_s=1.0)
    window.shrink(at=10.5, settle_s=1.0)  # the same burst
    assert window.limit == 4
    window.shrink(at=11.5, settle_s=1.0)
    assert window.limit == 2
    for _ in range(4):
        window.grow()
    assert 3.5 < window.limit < 4.5  # about one more per window of answers
    window.set_ceiling(3)
    assert window.limit == 3


def test_a_limit_learned_from_an_answer_starts_from_the_credit_it_reports(monkeypatch):
    monkeypatch.setattr(pacing, "PACE_SHARE", 1.0)
    monkeypatch.setattr(pacing, "_clock", lambda: 5.0)
    point = pacing.endpoint("learns")
    headers = {"X-RateLimit-Limit-Requests": "600", "x-ratelimit-remaining-requests": "0"}
    point.window.in_flight = 1
    point.done(
        limits=Limits(), role="r", prompt_estimate=0, cap=0, started=5.0, answered=True,
        headers=headers,
    )  # fmt: skip
    assert point.learned_rpm == 600 and point.requests.rate == 10
    assert point.requests.level == 0  # not a full bucket: the provider's is spent
    point.window.in_flight = 1
    point.done(
        limits=Limits(), role="r", prompt_estimate=0, cap=0, started=5.0, answered=True,
        headers={},
    )  # fmt: skip
    assert point.learned_rpm == 0  # an answer without limits: none known now


async def test_the_window_queues_callers_past_its_limit():
    window = Window(2)
    order: list[int] = []

    async def hold(i: int) -> None:
        await window.enter()
        order.append(i)
        await asyncio.sleep(0)
        window.leave()

    await window.enter()
    await window.enter()
    tasks = [asyncio.create_task(hold(i)) for i in range(3)]
    await asyncio.sleep(0)
    assert order == [] and len(window.waiters) == 3
    window.leave()
    window.leave()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2] and window.in_flight == 0


async def test_a_cancelled_waiter_gives_its_slot_on():
    window = Window(1)
    await window.enter()
    waiting = asyncio.create_task(window.enter())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    window.leave()
    assert window.in_flight == 0 and not window.waiters


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1m2.5s", 62.5), ("0.5", 0.5), ("x", None)],
)
def test_reset_durations_read_as_openai_writes_them(text, seconds):
    assert pacing.duration(text) == (None if seconds is None else pytest.approx(seconds))


async def test_limits_are_learned_from_headers_and_the_run_keeps_to_them():
    # 3,000 requests a minute, at most 50 in any second: 120 requests at once exceed it.
    behaviour = Behaviour(rpm=3000, window_s=1.0, seed=1)
    with fake_provider(lambda p, b: "SUPPORTS", behaviour=behaviour) as provider:
        model = resolve_model(provider.model())
        replies = await ask_many(model, 120, site())
        point = pacing.endpoint(pacing.endpoint_key(model))
        assert point.learned_rpm == 3000
    assert all(r.text == "SUPPORTS" and not r.errors for r in replies)
    assert billed(replies) == provider.request_count  # every request in the bill
    stats = pacing.snapshot()
    assert stats.rate_limited == provider.counts["limited"]
    assert stats.requests_sent == provider.request_count
    assert stats.answered == 120 and stats.in_flight == 0


async def test_set_limits_space_requests_evenly_without_any_429(monkeypatch):
    clock = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(pacing, "_clock", lambda: clock[0])
    monkeypatch.setattr(pacing, "PACE_SHARE", 1.0)
    point = pacing.endpoint("paced")
    limits = Limits(rpm=600)  # 10 a second, one second of credit
    for _ in range(30):
        assert await point.admit(limits, 0, until=clock[0] + 60, sleep=sleep)
        point.done(
            limits=limits, role="r", prompt_estimate=0, cap=0, started=clock[0], answered=True
        )
    assert waits[:1] and all(w == pytest.approx(0.1) for w in waits)
    assert len(waits) == 30 - 10  # the first second's credit goes at once
    assert pacing.snapshot().wait_s == pytest.approx(sum(waits))


async def test_a_wait_past_the_deadline_is_refused_at_once(monkeypatch):
    monkeypatch.setattr(pacing, "_clock", lambda: 0.0)
    point = pacing.endpoint("slow")
    limits = Limits(rpm=60)

    async def never(seconds: float) -> None:
        raise AssertionError("no wait expected")

    assert await point.admit(limits, 0, until=10, sleep=never)
    assert not await point.admit(limits, 0, until=0.5, sleep=never)  # the next slot is at 1 s
    assert point.window.in_flight == 1  # the refused one holds no slot


async def test_tokens_are_charged_as_prompt_plus_the_cap():
    behaviour = Behaviour(tpm=60_000, window_s=1.0, seed=3)  # 1,000 tokens a second
    with fake_provider(lambda p, b: "ok", behaviour=behaviour) as provider:
        model = resolve_model(provider.model())
        call = llm.CallSite(role="judge", agent="j", stage="judge", max_tokens=300)
        replies = await ask_many(model, 12, call)  # ~301 tokens each as the provider counts
        point = pacing.endpoint(pacing.endpoint_key(model))
        assert point.learned_tpm == 60_000
    assert all(r.text == "ok" for r in replies)
    assert billed(replies) == provider.request_count
    assert all(tokens >= 300 for _, tokens in provider.charged)


async def test_500s_are_retried_and_counted_apart_from_calls(monkeypatch):
    monkeypatch.setattr(llm, "RETRY_WAIT_INITIAL", 0.001)
    behaviour = Behaviour(error_share=0.3, seed=4)
    with fake_provider(lambda p, b: "SUPPORTS", behaviour=behaviour) as provider:
        model = resolve_model(provider.model())
        replies = await ask_many(model, 40, site())
    assert all(r.text == "SUPPORTS" for r in replies)
    assert provider.counts["errors"] > 0
    total: dict[str, Any] = {}
    for reply in replies:
        total = add_costs(total, reply.cost)
    assert total["total"]["llm_calls"] == 40
    assert total["total"]["rejected"] == provider.counts["errors"]
    assert pacing.snapshot().retried == provider.counts["errors"]


async def test_a_provider_failing_every_call_ends_the_call_at_its_deadline(monkeypatch):
    clock = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # the pacing clock moves only by the waits
        waits.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(pacing, "_clock", lambda: clock[0])
    monkeypatch.setattr(llm, "_sleep", sleep)
    monkeypatch.setattr(llm, "RETRY_WAIT_MAX", 4.0)
    with fake_provider(lambda p, b: "x", behaviour=Behaviour(error_share=1.0)) as provider:
        reply = await llm.ask(resolve_model(provider.model()), "p", site(deadline=20.0))
    [error] = reply.errors
    assert reply.text is None and llm.is_fault(error) and error["kind"] == "model_error"
    assert sum(waits) < 20.0 and len(waits) >= 4  # backoff 0.5-1, 1-2, 2-4, then 2-4 s each
    assert provider.request_count == len(waits) + 1
    assert billed([reply]) == provider.request_count
    assert pacing.snapshot().failed_calls == 1


async def test_every_request_reaches_the_bound_journal(monkeypatch):
    monkeypatch.setattr(llm, "RETRY_WAIT_INITIAL", 0.001)
    seen: list[dict[str, Any]] = []
    token = journal.bind(seen.append)
    try:
        behaviour = Behaviour(rpm=3000, window_s=1.0, error_share=0.2, seed=5)
        with fake_provider(lambda p, b: "SUPPORTS", behaviour=behaviour) as provider:
            replies = await ask_many(resolve_model(provider.model()), 70, site())
    finally:
        journal.unbind(token)
    outcomes = [e["outcome"] for e in seen]
    assert outcomes.count("sent") == provider.request_count == billed(replies)
    assert len(seen) == 2 * provider.request_count  # as each leaves, as each ends
    assert outcomes.count("answered") == 70
    assert outcomes.count("rejected") == provider.request_count - 70
    assert {e["status"] for e in seen if e["outcome"] == "rejected"} <= {429, 500}
    assert all(e["input_tokens"] > 0 for e in seen if e["outcome"] == "answered")
    first = seen[0]
    assert set(first) == {
        "role", "agent", "stage", "round", "outcome", "status", "input_tokens", "output_tokens",
        "at",
    }  # fmt: skip
    journal.note({"role": "x"})  # no sink bound: nothing happens


class SlowOnce(BaseChatModel):
    """Answers at once, except call number ``hang_at``, which never answers."""

    hang_at: int = 20
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "slow-once"

    def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
        raise AssertionError("async only")

    async def _agenerate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
        self.calls += 1
        if self.calls == self.hang_at:
            await asyncio.sleep(3600)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("fine"))])


async def test_a_hung_request_is_cut_from_recent_latencies_and_retried():
    model = SlowOnce()
    call = site(timeout=3600.0, limits=Limits(hang_cut_min_s=0.05))
    for _ in range(19):  # answered at once: the 99th percentile is near zero
        assert (await llm.ask(model, "p", call)).text == "fine"
    reply = await llm.ask(model, "p", call)  # the 20th hangs; the cut retries it
    assert reply.text == "fine" and reply.errors == []
    assert reply.cost["debater"] == {
        "llm_calls": 1, "input_tokens": 0, "output_tokens": 0, "rejected": 1
    }  # fmt: skip
    assert pacing.snapshot().hangs_cut == 1


async def test_a_cancelled_call_gives_its_slot_back():
    model = SlowOnce(hang_at=1)
    call = site(limits=Limits(max_in_flight=1))
    task = asyncio.create_task(llm.ask(model, "p", call))
    while model.calls == 0:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    point = pacing.endpoint(pacing.endpoint_key(model))
    assert point.window.in_flight == 0 and pacing.snapshot().in_flight == 0
    assert (await llm.ask(model, "p", call)).text == "fine"  # the one slot is free again


def test_before_enough_answers_the_hang_cut_is_the_call_timeout():
    point = pacing.endpoint("x")
    assert point.hang_cut(Limits(), "debater", 300.0) == 300.0


async def test_an_sdk_model_left_at_its_own_retries_sends_each_attempt_once():
    from langchain_openai import ChatOpenAI

    with fake_provider(lambda p, b: "x", status=500) as provider:
        model = ChatOpenAI(model="m", base_url=provider.url, api_key="k")  # type: ignore[arg-type]
        assert model.max_retries is None or model.max_retries > 0  # the SDK's default retries
        reply = await llm.ask(model, "p", site(retries=1))
    assert reply.text is None
    assert provider.request_count == 2  # ours: one retry; the SDK's own: none


def test_pacing_settings_are_bounded_with_one_line_errors():
    for bad in ({"rpm": -1}, {"tpm": -5}, {"max_in_flight": 0}, {"call_deadline_s": 0}):
        with pytest.raises(SettingsError) as caught:
            Context(**bad)
        assert "\n" not in str(caught.value) and next(iter(bad)) in str(caught.value)
    with pytest.raises(SettingsError, match="tpm_counts"):
        Context(tpm_counts="all")  # type: ignore[arg-type]


def test_settings_reach_the_call_site():
    ctx = Context(rpm=300, tpm=200_000, max_in_flight=8, call_deadline_s=90, hang_cut_min_s=5)
    call = ctx.site(role="judge", agent="judge", stage="judge")
    assert call.deadline == 90 and call.retries == -1
    assert call.limits == Limits(rpm=300, tpm=200_000, max_in_flight=8, hang_cut_min_s=5.0)


def test_the_environment_sets_the_limits_and_a_served_run_may_only_lower_them(monkeypatch):
    monkeypatch.setenv("FACTDEBATE_RPM", "300")
    monkeypatch.setenv("FACTDEBATE_MAX_IN_FLIGHT", "16")
    assert Context().rpm == 300 and Context().max_in_flight == 16
    Served = served(Context)
    assert Served().rpm == 300
    assert Served(rpm=100, max_in_flight=4).rpm == 100
    with pytest.raises(SettingsError, match="FACTDEBATE_RPM"):
        Served(rpm=600)
    with pytest.raises(SettingsError, match="FACTDEBATE_MAX_IN_FLIGHT"):
        Served(max_in_flight=64 + 1)


def test_answers_by_prompt_kind():
    responder = by_kind([("Write one search query", "[q]"), ("verdict", "SUPPORTS")], "?")
    assert responder("Write one search query for x", {}) == "[q]"
    assert responder("your verdict", {}) == "SUPPORTS"
    assert responder("other", {}) == "?"


async def test_a_stage_is_asked_under_its_measured_cap_and_again_under_the_role_cap_if_cut():
    with fake_provider(lambda p, b: "[" + "q" * 400 + "]") as provider:  # ~101 tokens
        model = resolve_model(provider.model())
        call = llm.CallSite(role="debater", agent="a", stage="query", max_tokens=1024)
        reply = await llm.ask(model, "Write one search query", call)
    caps = [r.get("max_completion_tokens") for r in provider.requests]
    assert caps == [64, 1024]
    assert reply.text is not None and reply.text.endswith("]") and not reply.truncated
    assert [e["kind"] for e in reply.errors] == ["truncated"]  # the first cut stays on record
    assert reply.cost["debater"]["llm_calls"] == 2


async def test_a_stage_cap_never_raises_the_role_cap():
    with fake_provider(lambda p, b: "[q]") as provider:
        model = resolve_model(provider.model())
        call = llm.CallSite(role="debater", agent="a", stage="query", max_tokens=32)
        await llm.ask(model, "Write one search query", call)
    assert [r.get("max_completion_tokens") for r in provider.requests] == [32]


PACING_SETTINGS = {
    "rpm": "0..1000000",
    "tpm": "0..1000000000",
    "max_in_flight": "1..4096",
    "call_deadline_s": "0.01..86400",
    "model_retries": "-1..1000",
    "call_timeout_s": "0.01..3600",
    "hang_cut_min_s": "0.01..3600",
    "hang_cut_factor": "1..100",
}


def test_factdebate_settings_lists_the_pacing_settings_with_ranges():
    from typer.testing import CliRunner

    from factdebate.cli import app

    result = CliRunner().invoke(app, ["settings", "tool-mad", "--json"])
    assert result.exit_code == 0, result.output
    listed = {s["name"]: s for s in json.loads(result.output)["settings"]}
    for name, bounds in PACING_SETTINGS.items():
        assert listed[name]["range"] == bounds, listed[name]
        assert listed[name]["group"] == "inputs and runtime"
    assert listed["tpm_counts"]["type"] == "cap | used"


@pytest.mark.parametrize("pair", ["rpm=-1", "tpm=x", "max_in_flight=0", "call_deadline_s=0"])
def test_a_bad_pacing_value_is_one_line_before_any_call(pair):
    from typer.testing import CliRunner

    from factdebate.cli import app

    result = CliRunner().invoke(app, ["verify", "A claim.", "--set", pair])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and pair.split("=")[0] in lines[0], result.output


def post(provider: Any, max_tokens: int = 10) -> Any:
    import httpx

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    return httpx.post(f"{provider.url}/chat/completions", json={**body, "max_tokens": max_tokens})


def test_the_fake_providers_faults_repeat_with_its_seed():
    outcomes = []
    for _ in range(2):
        with fake_provider(lambda p, b: "ok", behaviour=Behaviour(error_share=0.3, seed=7)) as fake:
            outcomes.append([post(fake).status_code for _ in range(30)])
    assert outcomes[0] == outcomes[1] and {200, 500} == set(outcomes[0])


def test_the_fake_provider_refuses_past_its_limit_with_openai_headers():
    with fake_provider(lambda p, b: "ok", behaviour=Behaviour(rpm=120, tpm=10_000)) as fake:
        first = post(fake, max_tokens=50)
        assert first.status_code == 200
        assert first.headers["x-ratelimit-limit-requests"] == "120"
        assert first.headers["x-ratelimit-limit-tokens"] == "10000"
        assert int(first.headers["x-ratelimit-remaining-requests"]) == 119
        # the cap counts: a request asking for more than the tokens left is refused
        refused = post(fake, max_tokens=20_000)
        assert refused.status_code == 429
        assert float(refused.headers["retry-after"]) > 0
        assert int(refused.headers["retry-after-ms"]) > 0
        assert "x-ratelimit-reset-tokens" in refused.headers
    assert fake.counts == {"received": 2, "answered": 1, "limited": 1, "errors": 0, "hangs": 0}


@pytest.mark.parametrize(
    ("kind", "fault"),
    [
        ("rate_limited", True),
        ("timeout", True),
        ("model_error", True),
        ("parse_error", False),
        ("truncated", False),
    ],
)
def test_a_fault_is_a_call_without_an_answer(kind, fault):
    record = llm.CallSite(role="judge", agent="j", stage="judge").error(kind, "m")
    assert llm.is_fault(record) is fault
