"""Model faults: transient errors retried within the call deadline, the rest recorded; runs end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from factdebate.graphs.madam_rag import graph as madam
from factdebate.graphs.tool_mad import graph as tool_mad
from factdebate.nodes.context import Context
from factdebate.nodes.madam_rag.context import MadamContext
from factdebate.nodes.state import MODEL_FAILURE
from factdebate.nodes.tool_mad.context import ToolMADContext
from factdebate.tools.models import llm, pacing
from factdebate.tools.models.providers import register_model
from tests.bounded import PROMPT_S
from tests.conftest import doc
from tests.fakes import ScriptedChatModel


class FakeResponse:
    """Just enough of an HTTP response for the retry logic."""

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.headers = headers or {}


class RateLimitError(Exception):
    """Shaped like the provider SDKs' 429 errors (status and response headers)."""

    def __init__(self, retry_after: str | None = None) -> None:
        super().__init__("Error code: 429 - rate limit reached for requests")
        self.status_code = 429
        self.response = FakeResponse(429, {"retry-after": retry_after} if retry_after else {})


class BadRequestError(Exception):
    """A 400: retrying cannot help."""

    status_code = 400


class HangingModel(BaseChatModel):
    """A model that never answers within any reasonable timeout."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "hanging"

    def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
        raise AssertionError("async only")

    async def _agenerate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
        self.calls += 1
        await asyncio.sleep(30)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("late"))])


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record backoff and pacing waits instead of sleeping: the pacing clock moves by them."""
    seen: list[float] = []
    clock = [1000.0]

    async def fake_sleep(seconds: float) -> None:
        seen.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(llm, "_sleep", fake_sleep)
    monkeypatch.setattr(pacing, "_clock", lambda: clock[0])
    return seen


def flaky(failures: int, exc: BaseException, text: str) -> tuple[Any, list[int]]:
    """An answer function raising ``exc`` on the first ``failures`` calls."""
    count = [0]

    def answer(prompt: str) -> str:
        count[0] += 1
        if count[0] <= failures:
            raise exc
        return text

    return answer, count


async def test_429_twice_then_success_uses_the_answer_and_keeps_no_error(waits):
    answer, count = flaky(2, RateLimitError(), "fine\n**SUPPORTS**")
    model = ScriptedChatModel(rules=[("x", answer)])
    reply = await llm.ask(
        model, "x", llm.CallSite(role="debater", agent="a", stage="argue", retries=2)
    )
    assert reply.text == "fine\n**SUPPORTS**"
    assert reply.errors == []
    assert count[0] == 3
    assert reply.cost["debater"]["llm_calls"] == 1  # the call counts once
    assert reply.cost["debater"]["rejected"] == 2  # its refused attempts apart
    assert len(waits) == 2


async def test_429_forever_records_rate_limited_after_bounded_attempts(waits):
    model = ScriptedChatModel(rules=[("x", RateLimitError())])
    reply = await llm.ask(
        model, "x", llm.CallSite(role="judge", agent="judge", stage="judge", retries=3)
    )
    assert reply.text is None
    assert len(model.prompts) == 4
    [error] = reply.errors
    assert error["kind"] == "rate_limited"
    assert "after 4 attempt(s)" in error["message"] and "429" in error["message"]
    assert reply.cost["judge"]["llm_calls"] == 1 and reply.cost["judge"]["rejected"] == 3
    assert llm.is_fault(error)


async def test_429_forever_is_retried_until_the_call_deadline(waits):
    model = ScriptedChatModel(rules=[("x", RateLimitError("7"))])
    site = llm.CallSite(role="judge", agent="judge", stage="judge", deadline=60.0)
    reply = await llm.ask(model, "x", site)
    assert reply.text is None and reply.errors[0]["kind"] == "rate_limited"
    assert waits == [7.0] * 8  # 9 attempts fit in 60 s of Retry-After waits, a 10th does not
    assert len(model.prompts) == 9
    assert reply.cost["judge"]["llm_calls"] + reply.cost["judge"]["rejected"] == 9


async def test_a_retry_after_pauses_every_caller_of_the_endpoint(waits):
    answer, _ = flaky(1, RateLimitError("5"), "ok")
    model = ScriptedChatModel(rules=[("x", answer)])
    site = llm.CallSite(role="debater", agent="a", stage="argue")
    first = await llm.ask(model, "x", site)
    assert first.text == "ok" and waits == [5.0]
    point = pacing.endpoint(pacing.endpoint_key(model))
    assert point.paused_until == pytest.approx(pacing.now(), abs=1e-6)  # waited out, then sent


async def test_non_transient_error_is_not_retried(waits):
    model = ScriptedChatModel(rules=[("x", BadRequestError("bad request"))])
    reply = await llm.ask(
        model, "x", llm.CallSite(role="judge", agent="judge", stage="judge", retries=3)
    )
    assert len(model.prompts) == 1
    assert waits == []
    assert reply.errors[0]["kind"] == "model_error"


@pytest.mark.parametrize(
    "exc",
    [
        TimeoutError(),
        ConnectionError(),
        type("APIConnectionError", (Exception,), {})(),
        type("OverloadedError", (Exception,), {})(),
        type("E", (Exception,), {"status_code": 503})(),
    ],
)
def test_transient_classification(exc):
    assert llm.is_transient(exc)


def test_non_transient_classification():
    assert not llm.is_transient(ValueError("bad"))
    assert not llm.is_transient(BadRequestError())


def test_retry_after_header_is_honoured_and_capped(monkeypatch):
    assert llm.retry_wait(RateLimitError("7"), 1) == 7.0
    monkeypatch.setattr(llm, "RETRY_AFTER_CAP", 5.0)
    assert llm.retry_wait(RateLimitError("7"), 1) == 5.0


def test_retry_after_ms_is_read_before_retry_after():
    exc = RateLimitError("7")
    exc.response.headers["retry-after-ms"] = "250"
    assert llm.retry_after(exc) == 0.25


def test_without_retry_after_the_wait_is_exponential_with_jitter(monkeypatch):
    monkeypatch.setattr(llm, "RETRY_WAIT_INITIAL", 1.0)
    monkeypatch.setattr(llm, "RETRY_WAIT_MAX", 4.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        wait = llm.retry_wait(RateLimitError(), attempt)
        assert ceiling / 2 <= wait <= ceiling


async def test_waits_double_from_the_first_failed_attempt_on(waits, monkeypatch):
    """Without a Retry-After, each retry waits twice as long (with jitter) as the one before."""
    monkeypatch.setattr(llm, "RETRY_WAIT_INITIAL", 1.0)
    monkeypatch.setattr(llm, "RETRY_WAIT_MAX", 100.0)
    model = ScriptedChatModel(rules=[("x", RateLimitError())])
    site = llm.CallSite(role="debater", agent="a", stage="argue", retries=3)
    reply = await llm.ask(model, "x", site)
    assert reply.text is None and len(model.prompts) == 4
    assert len(waits) == 3
    for wait, ceiling in zip(waits, (1.0, 2.0, 4.0), strict=True):
        assert ceiling / 2 <= wait <= ceiling


async def test_retry_after_reaches_the_sleep(waits):
    answer, _ = flaky(1, RateLimitError("3"), "ok")
    model = ScriptedChatModel(rules=[("x", answer)])
    reply = await llm.ask(model, "x", llm.CallSite(role="debater", agent="a", stage="argue"))
    assert reply.text == "ok" and waits == [3.0]


async def test_hanging_model_times_out_per_attempt_and_is_recorded(waits):
    model = HangingModel()
    site = llm.CallSite(role="debater", agent="a", stage="argue", timeout=0.05, retries=1)
    reply = await llm.ask(model, "x", site)
    assert model.calls == 2
    assert reply.errors[0]["kind"] == "timeout"
    assert "0.05s after 2 attempt(s)" in reply.errors[0]["message"]


def test_model_retries_setting_is_checked():
    assert Context().model_retries == -1  # as many as the call deadline allows
    with pytest.raises(ValueError, match="model_retries"):
        Context(model_retries=-2)


async def test_tool_mad_with_a_rate_limited_model_still_finishes(waits, fake_tools):
    model = ScriptedChatModel(rules=[(lambda p: True, RateLimitError())])
    name = register_model("rate-limited-forever", model)
    out = await tool_mad.ainvoke(
        {"claim": "The Eiffel Tower is in Paris."},
        context=ToolMADContext(model=name, max_rounds=1, model_retries=1),
    )
    assert out["verdict"] is None
    assert out["stop_reason"]
    kinds = {e["kind"] for e in out["errors"]}
    assert "rate_limited" in kinds
    # every prompt was tried exactly twice (1 retry): one call and one rejected attempt each
    total = out["cost"]["total"]
    assert total["llm_calls"] + total["rejected"] == len(model.prompts)
    assert total["rejected"] == total["llm_calls"]


async def test_tool_mad_with_a_hanging_model_ends_with_timeouts(waits, fake_tools):
    model = HangingModel()
    name = register_model("hanging-forever", model)
    out = await asyncio.wait_for(
        tool_mad.ainvoke(
            {"claim": "The Eiffel Tower is in Paris."},
            context=ToolMADContext(
                model=name,
                max_rounds=1,
                call_timeout_s=0.05,
                model_retries=0,
                stability_score=False,
            ),
        ),
        timeout=PROMPT_S,  # a hang guard: every call gives up at 0.05 s
    )
    assert out["verdict"] is None and out["stop_reason"]
    assert {e["kind"] for e in out["errors"]} >= {"timeout"}
    assert model.calls >= 3  # two debaters' turns and the judge all timed out


QUESTION = "When was Michael Jordan born?"


DOCS = [
    doc("nba", "Michael Jeffrey Jordan, the basketball player, was born in 1963."),
    doc("prof", "Michael Irwin Jordan, the Berkeley professor, was born in 1956."),
]


class Status429(Exception):
    """Shaped like a provider's rate-limit error."""

    status_code = 429


class Status401(Exception):
    """Shaped like a provider's bad-key error."""

    status_code = 401


FAULTS: list[Any] = [
    RuntimeError("provider down"),
    Status429("Error code: 429 - rate limit"),
    Status401("Error code: 401 - invalid key"),
    "this is not JSON at all",
]


@pytest.mark.parametrize("fault", FAULTS, ids=["error", "429", "401", "malformed"])
async def test_madam_rag_with_every_call_failing_gives_no_answer(fault, scripted):
    name, model = scripted([("", fault)])
    context = MadamContext(model=name, model_retries=0, max_rounds=3)
    out = await madam.ainvoke({"question": QUESTION, "documents": DOCS}, context=context)
    assert out["verdict"] is None
    assert out["answers"] == []
    assert out["stop_reason"] == MODEL_FAILURE
    assert out["rounds"] == 1
    assert "no_agent_answers" in [e["kind"] for e in out["errors"]]
    assert model.calls_with("AnswerList") == 0  # the aggregator is never asked to invent one


async def test_madam_rag_with_every_call_hanging_gives_no_answer():
    from factdebate.tools.models.providers import register_model

    name = register_model("hanging-madam", HangingModel())
    context = MadamContext(model=name, model_retries=0, call_timeout_s=1)
    out = await madam.ainvoke({"question": QUESTION, "documents": DOCS}, context=context)
    assert (out["verdict"], out["stop_reason"]) == (None, MODEL_FAILURE)
    assert "timeout" in [e["kind"] for e in out["errors"]]
