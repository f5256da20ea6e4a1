"""The lean OpenAI client sends what ChatOpenAI sends, and reads answers and faults alike."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from factdebate.tools.models.lean_openai import LeanChatOpenAI
from factdebate.tools.models.llm import (
    CallSite,
    ask,
    ask_samples,
    ask_structured,
    structured_mode,
    takes_samples,
)
from factdebate.tools.models.providers import resolve_model
from tests.fake_provider import fake_provider

SITE = CallSite(role="scorer", agent="a", stage="score", retries=0, max_tokens=64)


class Answer(BaseModel):
    """A small structured answer."""

    question: str
    noncommittal: int


def answer(prompt: str, body: dict[str, Any]) -> str:
    return '{"question": "Where is the tower?", "noncommittal": 0}'


def clients(url: str) -> tuple[LeanChatOpenAI, ChatOpenAI]:
    settings: dict[str, Any] = {
        "model": "fake-capable",
        "base_url": url,
        "api_key": "not-needed",
        "temperature": 0.0,
        "max_completion_tokens": 512,
        "max_retries": 0,
        "include_response_headers": True,
    }
    return LeanChatOpenAI(**settings), ChatOpenAI(**settings)


def test_openai_compatible_models_get_the_lean_client():
    model = resolve_model("openai-compatible:fake@http://127.0.0.1:9/v1")
    assert isinstance(model, LeanChatOpenAI) and isinstance(model, ChatOpenAI)
    assert structured_mode(model) == "response_format" and takes_samples(model)


async def test_requests_and_answers_match_langchains_client():
    with fake_provider(answer, honours_n=True) as provider:
        lean, plain = clients(provider.url)
        results = []
        for model in (lean, plain):
            value, reply = await ask_structured(model, "Write a question.", Answer, SITE)  # type: ignore[arg-type]
            text = await ask(model, "Say hello.", SITE)
            samples, sampled = await ask_samples(model, "Write a question.", Answer, SITE, 3)  # type: ignore[arg-type]
            results.append((value, reply.cost, text.text, text.cost, samples, sampled.cost))
        sent = provider.requests
    assert results[0] == results[1]
    assert results[0][0] == Answer(question="Where is the tower?", noncommittal=0)
    assert len(results[0][4]) == 3
    assert len(sent) == 6
    for lean_body, plain_body in zip(sent[:3], sent[3:], strict=True):
        assert {k: v for k, v in lean_body.items() if k != "stream"} == {
            k: v for k, v in plain_body.items() if k != "stream"
        }
    assert sent[0]["response_format"]["json_schema"]["name"] == "Answer"


async def test_response_headers_reach_the_message():
    with fake_provider(answer) as provider:
        lean, _ = clients(provider.url)
        message = await lean.ainvoke("Say hello.")
    headers = message.response_metadata["headers"]
    assert headers["content-type"] == "application/json"


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (401, "model_error")])
async def test_http_errors_are_the_sdks_errors(status: int, kind: str):
    with fake_provider(answer, status=status) as provider:
        lean, plain = clients(provider.url)
        replies = [await ask(model, "Say hello.", SITE) for model in (lean, plain)]
    for reply in replies:
        assert reply.text is None and reply.errors[0]["kind"] == kind
    assert replies[0].errors[0]["message"] == replies[1].errors[0]["message"]
