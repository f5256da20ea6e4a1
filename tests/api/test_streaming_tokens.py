"""`messages` mode: with a provider that streams, each debater's answer arrives in pieces."""

from __future__ import annotations

import itertools
from collections import Counter

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from factdebate.api import build_context
from factdebate.graphs.registry import load_method
from factdebate.tools.models.providers import register_model

ANSWER = "Every source places the tower in Paris, on the Champ de Mars.\n**SUPPORTS**"


async def test_each_debater_answer_streams_token_by_token():
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
