"""The reach check: a provider that cannot be reached is named in one line before any run."""

from __future__ import annotations

import time

import pytest

from factdebate.tools.models.providers import resolve_model
from factdebate.tools.models.reach import ModelUnreachableError, probe, unreachable_cause
from tests.bounded import assert_prompt
from tests.fake_provider import fake_provider
from tests.reliability.test_unreachable_provider import dead_model


def test_refused_connection_is_named_at_once() -> None:
    spec = dead_model()
    started = time.monotonic()
    with pytest.raises(ModelUnreachableError, match=r"cannot reach model .*: no connection"):
        probe(spec, resolve_model(spec, timeout=3600))  # a refusal must not wait out the timeout
    assert_prompt(started, "a probe of a refused connection")


@pytest.mark.parametrize(
    ("status", "cause"),
    [
        (401, "the provider refused the credentials (HTTP 401"),
        (403, "the provider denied access (HTTP 403"),
        (404, "unknown model or endpoint (HTTP 404"),
    ],
)
def test_refused_key_or_unknown_model_is_named(status: int, cause: str) -> None:
    with (
        fake_provider(lambda prompt, body: "OK", status=status) as provider,
        pytest.raises(ModelUnreachableError) as caught,
    ):
        probe(provider.model(), resolve_model(provider.model()))
    assert cause in str(caught.value) and len(provider.requests) == 1  # one try, no retry
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_overloads_let_the_run_go_on(status: int) -> None:
    with fake_provider(lambda prompt, body: "OK", status=status) as provider:
        probe(provider.model(), resolve_model(provider.model()))  # the run retries these


def test_a_working_provider_gets_one_tiny_call() -> None:
    with fake_provider(lambda prompt, body: "OK") as provider:
        probe(provider.model(), resolve_model(provider.model()))
    (request,) = provider.requests
    assert request["max_completion_tokens"] == 8


def test_timeouts_are_not_unreachable() -> None:
    assert unreachable_cause(TimeoutError("slow")) is None
    assert unreachable_cause(ConnectionRefusedError(111, "Connection refused")) is not None
    assert unreachable_cause(ValueError("bad JSON")) is None
