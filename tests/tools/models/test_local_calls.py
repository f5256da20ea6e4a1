"""The embedded model's calls are bounded by their work, never cut by the clock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult

from factdebate.tools.models import llm
from tests.fakes import ScriptedChatModel


class SlowModel(ScriptedChatModel):
    """The scripted fake, answering "Paris." after longer than the call timeout it is given."""

    default: str = "Paris."
    delay_s: float = 0.2

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kw: Any,
    ) -> ChatResult:
        await asyncio.sleep(self.delay_s)
        return self._generate(messages, stop)


def test_a_local_call_slower_than_the_timeout_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    model = SlowModel()
    monkeypatch.setattr(llm, "_is_local", lambda runnable: runnable is model)
    site = llm.CallSite(role="debater", agent="a", stage="argue", timeout=0.01)
    result, sent = asyncio.run(llm._call(model, [HumanMessage("Where?")], site))
    assert sent == 1 and isinstance(result, AIMessage) and result.content == "Paris."


def test_a_hosted_call_slower_than_the_timeout_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    model = SlowModel()
    monkeypatch.setattr(llm, "_is_local", lambda runnable: False)
    site = llm.CallSite(role="debater", agent="a", stage="argue", timeout=0.01, retries=0)
    result, _ = asyncio.run(llm._call(model, [HumanMessage("Where?")], site))
    assert isinstance(result, llm.Reply) and result.text is None
    assert [e["kind"] for e in result.errors] == ["timeout"]
