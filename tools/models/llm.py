"""One place that calls chat models: pacing, retries within a deadline, usage, structured output."""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from factdebate.tools.core.records import ErrorRecord, RoleCost, add_costs
from factdebate.tools.core.secrets import (
    redact as redact,  # re-exported: callers import it from here
)
from factdebate.tools.models import call_clock, journal, pacing
from factdebate.tools.models.caps import stage_cap
from factdebate.tools.models.faults import (  # re-exported: callers import them from here
    TRANSIENT_STATUS as TRANSIENT_STATUS,
)
from factdebate.tools.models.faults import cut_completion
from factdebate.tools.models.faults import is_rate_limit as is_rate_limit
from factdebate.tools.models.faults import is_transient as is_transient
from factdebate.tools.models.faults import status_of as status_of
from factdebate.tools.models.faults import was_cut as was_cut
from factdebate.tools.models.json_reader import read_model, validate
from factdebate.tools.models.pacing import Limits


@dataclass(frozen=True)
class CallSite:
    """Who asks and under which limits: named on every cost entry and error record."""

    role: str
    agent: str
    stage: str
    round_no: int = 0
    timeout: float = 300.0
    """Longest wait for one attempt, seconds (the hang cut may end it sooner)."""
    retries: int = -1
    """Most extra attempts after transient faults; -1 = as many as ``deadline`` allows."""
    deadline: float = 600.0
    """Longest time one call may take, pacing waits and retries included, seconds."""
    limits: Limits = field(default_factory=Limits)
    """What the endpoint's pacing is told: rate limits, concurrency ceiling, hang-cut bounds."""
    max_tokens: int | None = None
    """Output cap of this call (None = the model's own setting)."""
    today: str = ""
    """Today's date (ISO), told to the model in a system message; empty = not told."""

    def messages(self, prompt: str | list[BaseMessage]) -> list[BaseMessage]:
        """The messages of one call: the date (when set), then the prompt."""
        body: list[BaseMessage] = [HumanMessage(prompt)] if isinstance(prompt, str) else [*prompt]
        if not self.today:
            return body
        return [SystemMessage(f"Today's date is {self.today}."), *body]

    def error(self, kind: str, message: str, raw: str = "") -> ErrorRecord:
        """An error record for this call site (``raw`` kept, capped, when given)."""
        record = ErrorRecord(
            round=self.round_no, agent=self.agent, stage=self.stage, kind=kind, message=message
        )
        if raw:
            record["raw"] = raw[:2000]
        return record


@dataclass
class Reply:
    """Text of a model answer (None when the call failed) plus what it cost.

    ``truncated`` is True when the provider says the answer stopped at the output cap; the
    text is then kept as written and a ``truncated`` error is recorded.
    """

    text: str | None
    cost: dict[str, RoleCost]
    errors: list[ErrorRecord] = field(default_factory=list)
    truncated: bool = False


def usage_of(message: BaseMessage) -> tuple[int, int]:
    """Input and output token counts reported by the provider (0 when not reported)."""
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)


def one_call_cost(role: str, message: BaseMessage | None, attempts: int = 1) -> dict[str, RoleCost]:
    """Cost entry for one call by ``role`` that sent ``attempts`` requests.

    The call counts once (``llm_calls``; none when no request was sent); the attempts
    before the last one are ``rejected``.
    """
    tokens_in, tokens_out = usage_of(message) if message is not None else (0, 0)
    cost = RoleCost(llm_calls=min(1, attempts), input_tokens=tokens_in, output_tokens=tokens_out)
    if attempts > 1:
        cost["rejected"] = attempts - 1
    return {role: cost}


FAULT_KINDS = frozenset({"rate_limited", "timeout", "model_error"})
"""Error kinds of a call that produced no answer (a parse error or a cut answer is not one)."""


def is_fault(record: ErrorRecord) -> bool:
    """Whether ``record`` says a call produced no answer (rate limit, timeout, model error)."""
    return record.get("kind") in FAULT_KINDS


RETRY_WAIT_INITIAL = 1.0
"""First backoff wait in seconds (doubles per attempt, with jitter)."""
RETRY_WAIT_MAX = 20.0
"""Longest exponential backoff wait, seconds."""
RETRY_AFTER_CAP = 60.0
"""Longest wait honoured from a provider's Retry-After, seconds."""
_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait, if any.

    A ``retry_after`` attribute, else the response's ``retry-after-ms`` (OpenAI's finer one,
    read first as its SDK does), else its ``Retry-After`` (seconds or an HTTP date).
    """
    raw: Any = getattr(exc, "retry_after", None)
    if raw is None:
        for holder in (getattr(exc, "response", None), exc):
            headers = getattr(holder, "headers", None)
            if headers is None or not hasattr(headers, "get"):
                continue
            millis = headers.get("retry-after-ms")
            if millis is not None:
                try:
                    return max(0.0, float(millis) / 1000)
                except (TypeError, ValueError):
                    pass
            raw = headers.get("retry-after") or headers.get("Retry-After")
            if raw is not None:
                break
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        try:
            when = parsedate_to_datetime(str(raw))
        except (TypeError, ValueError):
            return None
        import datetime as dt

        seconds = (when - dt.datetime.now(when.tzinfo or dt.UTC)).total_seconds()
    return max(0.0, seconds) if seconds == seconds else None


def retry_wait(exc: BaseException | None, attempt_number: int) -> float:
    """Wait after attempt ``attempt_number`` (from 1) failed with ``exc``.

    The provider's Retry-After (capped), else exponential backoff with jitter.
    """
    asked = retry_after(exc) if exc is not None else None
    if asked is not None:
        return min(asked, RETRY_AFTER_CAP)
    ceiling = min(RETRY_WAIT_MAX, RETRY_WAIT_INITIAL * 2 ** (attempt_number - 1))
    return random.uniform(ceiling / 2, ceiling)


def _is_local(model: Any) -> bool:
    """Whether ``model`` (or the model a binding wraps) is the embedded llama.cpp model."""
    local = sys.modules.get("factdebate.tools.models.local_llm")
    cls = getattr(local, "LocalChatModel", None)
    return cls is not None and isinstance(getattr(model, "bound", model), cls)


def _failure(exc: BaseException, attempts: int, timeout: float) -> tuple[str, str]:
    """Error kind and (redacted) message after the last attempt failed with ``exc``."""
    tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
    if isinstance(exc, TimeoutError):
        return "timeout", f"no answer within {timeout:g}s{tries}"
    kind = "rate_limited" if is_rate_limit(exc) else "model_error"
    return kind, redact(f"{type(exc).__name__}: {exc}{tries}")[:2000]


async def _call(
    runnable: Runnable[Any, Any],
    messages: list[BaseMessage],
    site: CallSite,
    samples: int = 1,
    model: Any = None,
) -> tuple[Any, int]:
    """Run one call through its endpoint's pacing, retrying transient faults within a deadline.

    Returns the result and the number of requests sent. Each attempt waits for a slot and
    rate credit (``pacing``), runs until the call timeout or the hang cut from recent
    latencies, and is told to the journal when it ends. A 429 pauses the endpoint for its
    ``Retry-After`` (every caller waits it out); other transient faults wait an exponential
    backoff. A failure becomes a Reply without text; a structured answer an SDK refused for
    hitting the cap becomes the cut message. ``model``: the chat model behind ``runnable``
    (whose endpoint is paced), when ``runnable`` wraps it.
    """
    if _is_local(runnable):  # in-process: no limits to pace, and no wall-clock cut (below)
        started = pacing.now()
        try:
            # Bounded by its work (the token cap), not the clock: on a busy machine one call
            # takes minutes, and a cut would neither stop llama.cpp's thread nor free its turn.
            result = await runnable.ainvoke(messages)
        except Exception as exc:  # provider errors come in many types; record, do not crash
            return _failed(exc, 1, site), 1
        message = _message_of(result)
        _clock_call(site, started, *(usage_of(message) if message is not None else (0, 0)))
        return result, 1
    point = pacing.endpoint(pacing.endpoint_key(runnable if model is None else model))
    estimate = pacing.prompt_tokens([str(m.content) for m in messages])
    cap = (site.max_tokens or 0) * max(1, samples)
    until = pacing.now() + site.deadline
    attempts = 0
    while True:
        if not await point.admit(site.limits, estimate + cap, until, _sleep):
            pacing.count(failed_calls=1)
            late = RuntimeError(
                f"the provider's rate limit leaves no room within the {site.deadline:g}s "
                f"call deadline after {attempts} attempt(s)"
            )
            return _failed(late, attempts, site, kind="rate_limited"), attempts
        attempts += 1
        _journal(site, "sent", None, 0, 0)  # before it goes: a kill mid-request leaves it billed
        started = pacing.now()
        cut = min(point.hang_cut(site.limits, site.role, site.timeout), until - started)
        try:
            result = await _attempt(runnable, messages, max(cut, 0.001))
        except asyncio.CancelledError:  # the caller gave up: its slot goes to the next
            point.abandon()
            raise
        except Exception as exc:  # provider errors come in many types; record, do not crash
            answer = cut_completion(exc)
            if answer is not None:
                _settle(point, site, estimate, cap, started, answer, 200)
                return answer, attempts
            status = status_of(exc)
            hang = isinstance(exc, TimeoutError) and cut < site.timeout
            asked = retry_after(exc) if status == 429 else None
            wait = 0.0 if asked is not None else retry_wait(exc, attempts)
            retry = (
                is_transient(exc)
                and (site.retries < 0 or attempts <= site.retries)
                and pacing.now() + wait < until
            )
            point.done(
                limits=site.limits,
                role=site.role,
                prompt_estimate=estimate,
                cap=cap,
                started=started,
                answered=False,
                status=status,
                headers=_headers_of(exc),
                retry_after=None if asked is None else min(asked, RETRY_AFTER_CAP),
                hang=hang,
            )
            _journal(site, "rejected" if retry else "failed", status, 0, 0)
            if not retry:
                pacing.count(failed_calls=1)
                cut_site = site if cut >= site.timeout else replace(site, timeout=max(cut, 0.001))
                return _failed(exc, attempts, cut_site), attempts
            pacing.count(retried=1)
            if wait > 0:
                await _sleep(wait)
            continue
        _settle(point, site, estimate, cap, started, result, 200)
        return result, attempts


def _settle(
    point: pacing.Endpoint,
    site: CallSite,
    estimate: int,
    cap: int,
    started: float,
    result: Any,
    status: int,
) -> None:
    """Tell the pacing and the journal that an attempt brought ``result``."""
    message = _message_of(result)
    tokens_in, tokens_out = usage_of(message) if message is not None else (0, 0)
    meta = getattr(message, "response_metadata", None) or {}
    headers = meta.get("headers") if isinstance(meta.get("headers"), dict) else None
    point.done(
        limits=site.limits,
        role=site.role,
        prompt_estimate=estimate,
        cap=cap,
        started=started,
        answered=True,
        status=status,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        headers=headers,
    )
    _journal(site, "answered", status, tokens_in, tokens_out)
    _clock_call(site, started, tokens_in, tokens_out)


def _clock_call(site: CallSite, started: float, tokens_in: int, tokens_out: int) -> None:
    """Tell the bound call clock (the CLI's pace meter) that an answer came now."""
    call_clock.tell(call_clock.TimedCall(site.role, tokens_in, tokens_out, started, pacing.now()))


def _message_of(result: Any) -> BaseMessage | None:
    """The chat message inside a call's result (a message, a native structured answer, samples)."""
    if isinstance(result, BaseMessage):
        return result
    if isinstance(result, dict) and isinstance(result.get("raw"), BaseMessage):
        raw: BaseMessage = result["raw"]
        return raw
    generations = getattr(result, "generations", None)  # several samples: usage covers all
    if generations and generations[0] and hasattr(generations[0][0], "message"):
        first: BaseMessage = generations[0][0].message
        return first
    return None


def _headers_of(exc: BaseException) -> dict[str, Any] | None:
    """The HTTP headers a provider error carries (its response's), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None or not hasattr(headers, "items"):
        return None
    return {str(k).lower(): v for k, v in headers.items()}


def _journal(
    site: CallSite, outcome: str, status: int | None, tokens_in: int, tokens_out: int
) -> None:
    """Tell the bound journal about one request that leaves (``sent``) or ended."""
    journal.note(
        {
            "role": site.role,
            "agent": site.agent,
            "stage": site.stage,
            "round": site.round_no,
            "outcome": outcome,
            "status": status,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "at": time.time(),
        }
    )


async def _attempt(
    runnable: Runnable[Any, Any], messages: list[BaseMessage], timeout: float
) -> Any:
    """One attempt of a call, cut off after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        return await runnable.ainvoke(messages)


def _failed(exc: Exception, attempts: int, site: CallSite, kind: str = "") -> Any:
    """What a call that ended in ``exc`` returns: the cut answer an SDK carried, or a Reply."""
    cut = cut_completion(exc)
    if cut is not None:
        return cut
    found, text = _failure(exc, attempts, site.timeout)
    return Reply(None, one_call_cost(site.role, None, attempts), [site.error(kind or found, text)])


def _capped(model: Any, site: CallSite) -> Any:
    """``model`` with the site's output cap (the embedded model keeps its own), SDK retries off."""
    if _is_local(model):
        return model
    from factdebate.tools.models.providers import with_output_cap, without_sdk_retries

    model = without_sdk_retries(model)
    return model if site.max_tokens is None else with_output_cap(model, site.max_tokens)


def _cap_of(model: Any, site: CallSite) -> CallSite:
    """``site`` naming the cap ``model`` really answers under (the embedded model's own)."""
    if site.max_tokens is None or not _is_local(model):
        return site
    own = getattr(getattr(model, "bound", model), "max_tokens", None)
    return replace(site, max_tokens=own if isinstance(own, int) else None)


def _reply(message: BaseMessage, attempts: int, site: CallSite) -> Reply:
    """A successful answer as a Reply: text, cost, and a ``truncated`` record when cut."""
    text = message.content if isinstance(message.content, str) else str(message.text)
    text = redact(text)  # a reply echoing a provider key never reaches a transcript
    reply = Reply(text, one_call_cost(site.role, message, attempts))
    if was_cut(message):
        reply.truncated = True
        cap = f"the {site.max_tokens}-token output cap" if site.max_tokens else "the output cap"
        reply.errors.append(site.error("truncated", f"the answer stopped at {cap}", text))
    return reply


async def ask(
    model: BaseChatModel | Runnable[Any, BaseMessage],
    prompt: str | list[BaseMessage],
    site: CallSite,
) -> Reply:
    """Send one prompt; never raises for model faults, which are returned as error records.

    Requests are paced per endpoint (``pacing``). Transient faults (timeouts, cut hangs,
    connection errors, 408/429/5xx, rate-limit classes) are retried within ``site.deadline``
    (and ``site.retries`` when not -1), honouring Retry-After (capped); other errors fail at
    once. The call counts as one LLM call; the attempts retried are counted as ``rejected``.
    A stage with a measured cap (``caps``) is asked under it first; an answer cut there is
    asked again under the role's cap, both calls counted and the cut recorded. An answer the
    provider cut at the role's cap is kept and recorded as ``truncated``.
    """
    site = _cap_of(model, site)
    first = _sized(model, site)
    reply = await _ask_once(model, prompt, first)
    if not reply.truncated or first.max_tokens == site.max_tokens:
        return reply
    again = await _ask_once(model, prompt, site)
    again.cost = add_costs(reply.cost, again.cost)
    again.errors = reply.errors + again.errors
    return again


async def _ask_once(
    model: BaseChatModel | Runnable[Any, BaseMessage],
    prompt: str | list[BaseMessage],
    site: CallSite,
) -> Reply:
    """One text call under the site's cap."""
    result, attempts = await _call(_capped(model, site), site.messages(prompt), site, model=model)
    if isinstance(result, Reply):
        return result
    return _reply(result, attempts, site)


def _sized(model: Any, site: CallSite) -> CallSite:
    """``site`` under its stage's measured cap, where that is below the role's."""
    if _is_local(model):
        return site
    cap = stage_cap(site.stage, site.max_tokens)
    return site if cap == site.max_tokens else replace(site, max_tokens=cap)


SchemaT = TypeVar("SchemaT", bound=BaseModel)
SCHEMA_INSTRUCTION = "Answer with one JSON object matching this JSON schema:"


def structured_mode(model: Any) -> str:
    """How ``model`` is asked for JSON: grammar, response_format, native or prompt.

    ``grammar``: the embedded llama.cpp model, held to the schema by a JSON grammar.
    ``response_format``: OpenAI and OpenAI-compatible servers (vLLM...), JSON-schema
    response format. ``native``: any other chat model implementing
    ``with_structured_output`` (Anthropic: tool calling; Ollama: ``format``).
    ``prompt``: the schema goes in the prompt and the text is read and validated. A model
    class may name its mode in a ``structured_output_mode`` class attribute (a local
    Hugging Face pipeline, say, whose tool calling is not real).
    """
    base = getattr(model, "bound", model)
    declared = getattr(type(base), "structured_output_mode", None)
    if isinstance(declared, str):
        return declared
    if _is_local(base):
        return "grammar"
    if type(base).__name__ in ("ChatOpenAI", "AzureChatOpenAI"):
        return "response_format"
    if not isinstance(base, BaseChatModel):
        return "prompt"
    implemented = type(base).with_structured_output is not BaseChatModel.with_structured_output
    tools = type(base).bind_tools is not BaseChatModel.bind_tools
    return "native" if implemented or tools else "prompt"


def _schema_json(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema``, built once per class (pydantic rebuilds it per call)."""
    found = _SCHEMAS.get(schema)
    if found is None:
        found = _SCHEMAS[schema] = schema.model_json_schema()
    return found


_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}


def schema_prompt(prompt: str, schema: type[BaseModel]) -> str:
    """The text a ``prompt``-mode model is sent: the prompt, then the JSON schema to follow.

    Training data for such a model (a post-trained moderator) is framed by this same
    function, so what it learns from and what it is asked at inference agree.
    """
    schema_text = json.dumps(_schema_json(schema))
    return f"{prompt}\n\n{SCHEMA_INSTRUCTION}\n{schema_text}"


async def _structured_once(
    model: BaseChatModel,
    prompt: str,
    schema: type[SchemaT],
    site: CallSite,
    mode: str,
) -> tuple[SchemaT | None, Reply]:
    """One structured call in ``mode``; parse failures are recorded on the reply."""
    target: Any
    text_prompt = prompt
    if mode == "grammar":
        target = model.bind(response_format={"type": "json_object", "schema": _schema_json(schema)})
    elif mode == "response_format":
        fmt = {
            "type": "json_schema",
            "json_schema": {
                "name": schema.__name__,
                "schema": _schema_json(schema),
                "strict": False,
            },
        }
        target = _capped(model, site).bind(response_format=fmt)
    elif mode == "native":
        target = _capped(model, site).with_structured_output(schema, include_raw=True)
    else:
        target = model
        text_prompt = schema_prompt(prompt, schema)
    messages = site.messages(text_prompt)
    if mode == "prompt":
        result, attempts = await _call(_capped(target, site), messages, site, model=model)
    else:
        result, attempts = await _call(target, messages, site, model=model)
    if isinstance(result, Reply):
        return None, result
    parsed: Any = None
    if isinstance(result, dict):  # native: {"raw": message, "parsed": ..., "parsing_error": ...}
        raw = result.get("raw")
        reply = _reply(raw, attempts, site) if isinstance(raw, BaseMessage) else Reply("", {})
        value = result.get("parsed")
        if isinstance(value, schema):
            parsed = value
        elif isinstance(value, dict):
            parsed = validate(value, schema)
        elif reply.truncated:
            parsed = "the structured answer was cut at the output cap"
        elif isinstance(raw, BaseMessage):
            parsed = read_model(_raw_text(raw), schema)
            if isinstance(parsed, str) and result.get("parsing_error") is not None:
                parsed = redact(f"{parsed} ({result['parsing_error']})")[:500]
        if reply.text == "" and isinstance(raw, BaseMessage):
            reply.text = _raw_text(raw)
    else:
        reply = _reply(result, attempts, site)
        parsed = read_model(reply.text or "", schema)
    if isinstance(parsed, str) or parsed is None:
        problem = parsed if isinstance(parsed, str) else "no structured output"
        reply.errors.append(site.error("parse_error", problem, reply.text or ""))
        return None, reply
    return parsed, reply


def _raw_text(message: BaseMessage) -> str:
    """The JSON a native structured answer carried: tool-call arguments, else the text."""
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        return json.dumps(calls[0].get("args", {}))
    return message.content if isinstance(message.content, str) else str(message.text)


async def ask_structured(
    model: BaseChatModel,
    prompt: str,
    schema: type[SchemaT],
    site: CallSite,
) -> tuple[SchemaT | None, Reply]:
    """Ask for output matching ``schema``; a mismatch is recorded as a parse error, never guessed.

    Uses the provider's structured-output mode where it has one (see ``structured_mode``),
    else the schema in the prompt. A stage with a measured cap (``caps``) is asked under it
    first. An answer cut at the output cap is asked again once, under the role's cap when the
    stage's cut it, else with twice the cap, before it is recorded as unparseable; both calls
    count, and the cut stays on record as a ``truncated`` error.
    """
    mode = structured_mode(model)
    site = _cap_of(model, site)
    first = _sized(model, site)
    parsed, reply = await _structured_once(model, prompt, schema, first, mode)
    if parsed is not None or not reply.truncated or first.max_tokens is None or mode == "grammar":
        return parsed, reply
    cut_at_role_cap = first.max_tokens == site.max_tokens or site.max_tokens is None
    bigger = replace(site, max_tokens=first.max_tokens * 2) if cut_at_role_cap else site
    parsed, again = await _structured_once(model, prompt, schema, bigger, mode)
    again.cost = add_costs(reply.cost, again.cost)
    # The cut is kept on record; "unparseable" is only said of the answer that counts.
    again.errors = [e for e in reply.errors if e.get("kind") != "parse_error"] + again.errors
    return parsed, again


def takes_samples(model: Any) -> bool:
    """Whether ``model``'s provider answers one request with several samples (OpenAI's ``n``).

    OpenAI and OpenAI-compatible chat models carry an ``n`` field and are asked through
    ``response_format``; Anthropic, Ollama and the embedded model have no such parameter.
    """
    inner = getattr(model, "bound", model)
    known = _endpoint(inner) not in _NO_SAMPLES
    return known and structured_mode(model) == "response_format" and hasattr(inner, "n")


_NO_SAMPLES: set[tuple[str, str]] = set()
"""Endpoints whose request for several samples failed: asked one sample at a time after."""


def _endpoint(model: Any) -> tuple[str, str]:
    """Which provider endpoint and model a chat model talks to."""
    url = getattr(model, "openai_api_base", None) or ""
    return str(url), str(getattr(model, "model_name", "") or "")


async def ask_samples(
    model: BaseChatModel, prompt: str, schema: type[SchemaT], site: CallSite, n: int
) -> tuple[list[SchemaT], Reply]:
    """``n`` structured answers to one prompt in ONE request (``n`` choices), parsed in order.

    For a model that ``takes_samples``. The call counts once whatever comes back; a provider
    that ignores ``n`` sends one choice, and the caller asks for the rest one by one. The
    reply's cost records the samples received (``samples``); choices that do not parse are
    recorded as parse errors and left out.
    """
    site = _sized(model, site)
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": _schema_json(schema), "strict": False},
    }
    capped = _capped(model, site)
    bound = getattr(capped, "bound", capped)
    extra = {**getattr(capped, "kwargs", {}), "n": n, "response_format": fmt}

    async def generate(messages: list[BaseMessage]) -> Any:
        return await bound.agenerate([messages], **extra)

    from langchain_core.runnables import RunnableLambda

    result, attempts = await _call(
        RunnableLambda(generate), site.messages(prompt), site, n, model=model
    )
    if isinstance(result, Reply):  # e.g. a server refusing n > 1: one at a time from now on
        _NO_SAMPLES.add(_endpoint(bound))
        result.errors = []  # the caller asks again one by one; the spent call stays counted
        return [], result
    choices = [g.message for g in result.generations[0] if hasattr(g, "message")]
    if not choices:
        failed = _failed(RuntimeError("the provider sent no choice"), attempts, site)
        return [], failed if isinstance(failed, Reply) else Reply(None, {})
    reply = _reply(choices[0], attempts, site)  # usage covers every choice of the request
    reply.cost[site.role]["samples"] = len(choices)
    parsed: list[SchemaT] = []
    for message in choices:
        text = message.content if isinstance(message.content, str) else str(message.text)
        value = read_model(redact(text), schema)
        if isinstance(value, str):
            reply.errors.append(site.error("parse_error", value, text))
        else:
            parsed.append(value)
    return parsed, reply
