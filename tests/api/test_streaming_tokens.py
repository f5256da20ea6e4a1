"""`messages` mode: where the model streams (a fake, the embedded model), answers come in pieces."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from factdebate.api import build_context
from factdebate.graphs.registry import load_method
from factdebate.tools.models.providers import register_model


@pytest.fixture
def embedded() -> None:
    """Skips, saying why, where the embedded model's weights are not installed."""
    from factdebate.tools.core.records import ModelConfigError
    from factdebate.tools.models.local_llm import local_model_path

    try:
        local_model_path()
    except ModelConfigError as exc:
        pytest.skip(f"the embedded model is not installed: {exc}")


ANSWER = "Every source places the tower in Paris, on the Champ de Mars.\n**SUPPORTS**"


async def test_each_debater_answer_streams_token_by_token() -> None:
    answers = itertools.cycle([AIMessage(ANSWER)])
    name = register_model("streaming-fake", GenericFakeChatModel(messages=answers))
    graph, _ = load_method("mad")
    context = build_context("mad", model=name, max_rounds=1)
    pieces: Counter[str] = Counter()
    text: dict[str, str] = {}
    async for chunk, meta in graph.astream(
        {"claim": "The Eiffel Tower is in Paris."}, context=context, stream_mode="messages"
    ):
        node = str(meta.get("langgraph_node"))
        pieces[node] += 1
        text[node] = text.get(node, "") + str(chunk.content)
    for agent in ("affirmative", "negative"):
        assert pieces[agent] > 1, pieces  # more than one chunk per answer
        assert text[agent] == ANSWER  # the pieces make up the whole answer


async def test_each_debater_answer_streams_on_the_embedded_model(embedded: None) -> None:
    """MAD on ``local``, one round, 24-token answers: streamed as it is written.

    The same debate asked without streaming (greedy, as the default temperature is) writes
    the same transcript at the same cost: streaming changes only when the words arrive.
    """

    graph, _ = load_method("mad")
    caps = {"max_output_tokens": 24, "judge_max_output_tokens": 24}
    context = build_context("mad", model="local", max_rounds=1, **caps)
    claim = {"claim": "The Eiffel Tower is in Paris."}
    pieces: Counter[str] = Counter()
    text: dict[str, str] = {}
    state: dict[str, Any] = {}
    async for mode, part in graph.astream(
        claim, context=context, stream_mode=["messages", "values"]
    ):
        if mode == "values":
            state = part
            continue
        chunk, meta = part
        node = str(meta.get("langgraph_node"))
        pieces[node] += 1 if chunk.content else 0
        text[node] = text.get(node, "") + str(chunk.content)
    answers = {turn["agent"]: turn["answer"] for turn in state["transcript"]}
    for agent in ("affirmative", "negative"):
        assert pieces[agent] > 1, pieces  # more than one piece of text per answer
        assert text[agent] == answers[agent] and answers[agent]
    unstreamed = await graph.ainvoke(claim, context=context)
    assert unstreamed["transcript"] == state["transcript"]
    assert unstreamed["cost"] == state["cost"] and state["cost"]["debater"]["output_tokens"] > 0


async def test_protocol_v2_message_events_carry_the_embedded_models_words(
    embedded: None,
) -> None:
    """The event stream the server's protocol v2 asks for: text deltas, usage unchanged."""
    from langgraph._internal._constants import CONFIG_KEY_STREAM_MESSAGES_V2

    graph, _ = load_method("mad")
    caps = {"max_output_tokens": 16, "judge_max_output_tokens": 16}
    context = build_context("mad", model="local", max_rounds=1, **caps)
    deltas: Counter[str] = Counter()
    text: dict[str, str] = {}
    state: dict[str, Any] = {}
    async for part in graph.astream(
        {"claim": "The Eiffel Tower is in Paris."},
        context=context,
        stream_mode=["messages", "values"],
        version="v2",
        config={"configurable": {CONFIG_KEY_STREAM_MESSAGES_V2: True}},
    ):
        if part["type"] == "values":
            state = part["data"]
            continue
        event, meta = part["data"]
        if event.get("event") == "content-block-delta":
            node = str(meta.get("langgraph_node"))
            deltas[node] += 1
            text[node] = text.get(node, "") + str(event["delta"].get("text", ""))
    answers = {turn["agent"]: turn["answer"] for turn in state["transcript"]}
    for agent in ("affirmative", "negative"):
        assert deltas[agent] > 1, deltas
        assert text[agent] == answers[agent] and answers[agent]
    assert state["cost"]["debater"]["output_tokens"] == 2 * 16  # both answers cut at the cap


@pytest.mark.service
async def test_langgraph_dev_streams_the_embedded_models_words_to_the_sdk(
    tmp_path: Path, embedded: None
) -> None:
    """Through a live `langgraph dev` serving MAD: `messages-tuple` chunks add up to each turn."""
    from langgraph_sdk import get_client

    from tests.conftest import REPO
    from tests.langgraph_server import LanggraphDev

    dev = LanggraphDev(tmp_path, {"mad": str(REPO / "graphs" / "mad.py") + ":graph"})
    dev.start()
    pieces: Counter[str] = Counter()
    text: dict[str, str] = {}
    state: dict[str, Any] = {}
    caps = {"max_output_tokens": 16, "judge_max_output_tokens": 16}
    try:
        async for part in get_client(url=dev.url).runs.stream(
            None,
            "mad",
            input={"claim": "The Eiffel Tower is in Paris."},
            context={"model": "local", "max_rounds": 1, **caps},
            stream_mode=["messages-tuple", "values"],
        ):
            if part.event == "values":
                state = part.data
            elif part.event == "messages":
                chunk, meta = part.data
                node = str(meta.get("langgraph_node"))
                pieces[node] += 1 if chunk.get("content") else 0
                text[node] = text.get(node, "") + str(chunk.get("content") or "")
    finally:
        dev.stop()
    answers = {turn["agent"]: turn["answer"] for turn in state["transcript"]}
    for agent in ("affirmative", "negative"):
        assert pieces[agent] > 1, pieces
        assert text[agent] == answers[agent] and answers[agent]
    assert state["cost"]["debater"]["output_tokens"] == 2 * 16
