"""Tool-MAD served for the MCP client tests: the scripted server model, and a slow copy of it."""

from __future__ import annotations

import time
from typing import Any

from factdebate.tools.models.providers import register_model
from tests.fakes import ScriptedChatModel
from tests.server_graph import graph, scripted_rules

DELAY_S = 0.6
"""How long each call of the slow model takes: a run of many calls outlasts a short timeout."""


def _slow(answer: Any) -> Any:
    def later(prompt: str) -> str:
        time.sleep(DELAY_S)  # a provider thinking (the model runs in a worker thread)
        return answer(prompt) if callable(answer) else str(answer)

    return later


register_model(
    "scripted-slow",
    ScriptedChatModel(rules=[(key, _slow(answer)) for key, answer in scripted_rules()]),
)

__all__ = ["graph"]
