"""The embedded model streams: a streamed call writes, costs and caches as an unstreamed one."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk, BaseMessage

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.models import local_llm
from factdebate.tools.models.faults import was_cut
from tests.bounded import MODEL_GUARD_S, run_bounded

LONG = "Write a long story about a lighthouse keeper."
SHORT = "Name the capital of France in one word."


@pytest.fixture(autouse=True)
def _weights() -> None:
    try:
        local_llm.local_model_path()
    except ModelConfigError as exc:
        pytest.skip(f"the embedded model is not installed: {exc}")


def _joined(chunks: list[Any]) -> AIMessageChunk:
    """The message the chunks of one stream add up to."""
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk)
    return total


def _fresh(max_tokens: int) -> local_llm.LocalChatModel:
    """A model loaded anew: its first call takes the first seed of its prompt's sequence."""
    return local_llm.load_local_model(temperature=0.8, max_tokens=max_tokens)


@pytest.mark.parametrize(("prompt", "max_tokens", "cut"), [(LONG, 16, True), (SHORT, 48, False)])
async def test_a_streamed_call_writes_what_the_unstreamed_call_writes(
    prompt: str, max_tokens: int, cut: bool
) -> None:
    """Sampled (temperature 0.8), so the same text also means the same seed."""
    loaded = [_fresh(max_tokens) for _ in range(3)]
    try:
        whole = loaded[0].invoke(prompt)
        synced = list(loaded[1].stream(prompt))
        streamed = [chunk async for chunk in loaded[2].astream(prompt)]
    finally:
        for model in loaded:
            model.client.close()
    for chunks in (synced, streamed):
        worded = [c for c in chunks if c.content]
        assert len(worded) > 1  # more than one piece of text
        carrying = [i for i, c in enumerate(chunks) if c.usage_metadata]
        assert len(carrying) == 1 and "finish_reason" in chunks[carrying[0]].response_metadata
        assert not any(c.content for c in chunks[carrying[0] :])  # usage after the last word
        joined = _joined(chunks)
        assert joined.content == whole.content and joined.content
        assert joined.usage_metadata == whole.usage_metadata
        assert was_cut(joined) is was_cut(whole) is cut
    assert whole.usage_metadata is not None and whole.usage_metadata["output_tokens"] > 0
    if cut:
        assert whole.usage_metadata["output_tokens"] == max_tokens


def test_a_streamed_call_is_saved_in_the_prefix_cache_and_frees_the_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(local_llm.CACHE_ENV, "64")
    model = _fresh(8)
    try:
        cache = model.client.cache
        assert cache is not None
        before = len(cache.cache_state)
        list(model.stream(LONG))
        assert len(cache.cache_state) == before + 1
        assert not local_llm._generate_lock.locked()
        left = model.stream(LONG)
        next(left)  # a caller that leaves after the first chunk
        left.close()
        assert not local_llm._generate_lock.locked()
        assert "generate" not in vars(model.client)  # the usage counter is taken off again
    finally:
        model.client.close()


async def test_a_stream_left_early_lets_the_next_call_run() -> None:
    model = _fresh(64)
    try:
        stream = model.astream(LONG)
        async for _chunk in stream:
            break
        await stream.aclose()
        answer = await model.ainvoke(SHORT)  # waits for the generate lock the stream held
    finally:
        model.client.close()
    assert isinstance(answer, BaseMessage) and answer.content


PARALLEL_STREAMS = """
import asyncio, concurrent.futures, os, sys
from factdebate.tools.models.local_llm import load_local_model

async def main():
    asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(2))
    model = load_local_model(max_tokens=6)

    async def one(i):
        return "".join([str(c.content) async for c in model.astream(f"Name colour {i}.")])

    try:
        texts = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(4))), 600)
    except TimeoutError:
        print("the streams never finished", flush=True)
        os._exit(3)  # the stuck pool threads would keep the interpreter from exiting
    print(sum(1 for text in texts if text), flush=True)
    os._exit(0)

asyncio.run(main())
"""


def test_parallel_streams_take_turns_on_a_pool_smaller_than_the_callers() -> None:
    """Four streams, two pool threads: each stream keeps one thread while it holds the lock.

    Run in a child process: were the threads to wait on each other, they could never be freed.
    """
    child = run_bounded(
        [sys.executable, "-c", PARALLEL_STREAMS],
        what="four parallel streams of the embedded model",
        guard_s=MODEL_GUARD_S,
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == 0, child.stdout + child.stderr[-2000:]
    assert child.stdout.strip() == "4"


def test_a_grammar_held_answer_streams_the_same_json() -> None:
    """Structured calls (a JSON schema held by llama.cpp's grammar) stream as they sample."""
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    }
    bound = {"response_format": {"type": "json_object", "schema": schema}}
    loaded = [_fresh(48) for _ in range(2)]
    try:
        whole = loaded[0].bind(**bound).invoke(SHORT)
        chunks = list(loaded[1].bind(**bound).stream(SHORT))
    finally:
        for model in loaded:
            model.client.close()
    joined = _joined(chunks)
    assert len([c for c in chunks if c.content]) > 1
    assert joined.content == whole.content and str(joined.content).startswith("{")
    assert joined.usage_metadata == whole.usage_metadata
