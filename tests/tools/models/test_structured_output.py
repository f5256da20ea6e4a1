"""Structured stages use a provider's own structured-output mode, and fall back without one."""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, Field

from factdebate.nodes.madam_rag.doc_agent import AgentAnswer
from factdebate.tools.models.llm import (
    SCHEMA_INSTRUCTION,
    CallSite,
    ask,
    ask_structured,
    schema_prompt,
    structured_mode,
)
from tests.fakes import ScriptedChatModel

SITE = CallSite(role="agent", agent="agent_1", stage="answer", round_no=1, max_tokens=100)


class ToolCallingFake(BaseChatModel):
    """Answers structured requests like a tool-calling provider (Anthropic's shape).

    ``answers`` are the tool-call arguments it returns in turn; an answer longer than the
    cap (in words) is cut and reported with ``stop_reason: max_tokens``.
    """

    answers: list[dict[str, Any]] = Field(default_factory=list)
    max_tokens: int = 100
    seen: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise NotImplementedError("structured requests only")

    def with_structured_output(  # type: ignore[override]
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[Any, Any]:
        def answer(messages: Any) -> dict[str, Any]:
            args = self.answers[len(self.seen) % len(self.answers)]
            self.seen.append({"cap": self.max_tokens, "prompt": str(messages)})
            words = sum(len(str(v).split()) for v in args.values())
            cut = words > self.max_tokens
            raw = AIMessage(
                "",
                tool_calls=[{"name": schema.__name__, "args": args, "id": "call_1"}],
                response_metadata={"stop_reason": "max_tokens" if cut else "end_turn"},
                usage_metadata={"input_tokens": 10, "output_tokens": words, "total_tokens": 10},
            )
            parsed = None if cut else schema.model_validate(args)
            error = ValueError("cut tool call") if cut else None
            return {"raw": raw, "parsed": parsed, "parsing_error": error}

        return RunnableLambda(answer)


class Plain(BaseChatModel):
    """A chat model without structured output or tools: only text."""

    text: str

    @property
    def _llm_type(self) -> str:
        return "plain"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.text))])


async def test_native_structured_output_is_used_where_the_model_has_it() -> None:
    model = ToolCallingFake(answers=[{"answer": "1904", "explanation": "the document says so"}])
    assert structured_mode(model) == "native"
    parsed, reply = await ask_structured(model, "Question?", AgentAnswer, SITE)
    assert isinstance(parsed, AgentAnswer) and parsed.answer == "1904"
    assert SCHEMA_INSTRUCTION not in model.seen[0]["prompt"]
    assert reply.cost["agent"]["llm_calls"] == 1 and not reply.errors


async def test_a_cut_native_answer_is_retried_once_with_twice_the_cap() -> None:
    long = {"answer": "1904", "explanation": "word " * 150}
    model = ToolCallingFake(answers=[long])
    parsed, reply = await ask_structured(model, "Question?", AgentAnswer, SITE)
    assert [s["cap"] for s in model.seen] == [100, 200]
    assert isinstance(parsed, AgentAnswer)  # 150 words fit in the doubled cap
    assert [e["kind"] for e in reply.errors] == ["truncated"]
    assert reply.cost["agent"]["llm_calls"] == 2


async def test_a_cut_that_stays_cut_is_recorded_unparseable() -> None:
    model = ToolCallingFake(answers=[{"answer": "x", "explanation": "word " * 500}])
    parsed, reply = await ask_structured(model, "Question?", AgentAnswer, SITE)
    assert parsed is None
    assert [e["kind"] for e in reply.errors] == ["truncated", "truncated", "parse_error"]


async def test_models_without_structured_output_get_the_schema_in_the_prompt() -> None:
    text = 'Sure!\n```json\n{"answer": "1904", "explanation": "doc 1",}\n```\nHope that {helps}.'
    model = ScriptedChatModel(rules=[("Question?", text)])
    assert structured_mode(model) == "prompt"
    parsed, reply = await ask_structured(model, "Question?", AgentAnswer, SITE)
    assert isinstance(parsed, AgentAnswer) and parsed.explanation == "doc 1"
    assert SCHEMA_INSTRUCTION in model.prompts[0]
    plain = Plain(text="I would rather not.")
    parsed, reply = await ask_structured(plain, "Question?", AgentAnswer, SITE)
    assert parsed is None and reply.errors[0]["kind"] == "parse_error"
    assert reply.errors[0]["raw"] == "I would rather not."


class Cut(BaseModel):
    """A schema for the truncation test."""

    words: list[str]


async def test_a_plain_text_answer_cut_by_the_provider_is_kept_and_recorded() -> None:
    message = AIMessage("half an argu", response_metadata={"finish_reason": "length"})
    model = ScriptedChatModel(rules=[])
    model.default = "unused"

    class LengthCut(Plain):
        def _generate(self, messages: list[BaseMessage], *args: Any, **kw: Any) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=message)])

    reply = await ask(LengthCut(text=""), "Argue.", SITE)
    assert reply.text == "half an argu" and reply.truncated
    (error,) = reply.errors
    assert error["kind"] == "truncated" and "100-token" in error["message"]
    assert (error["agent"], error["stage"], error["round"]) == ("agent_1", "answer", 1)


def test_each_provider_family_gets_its_own_mode() -> None:
    from langchain_anthropic import ChatAnthropic
    from langchain_ollama import ChatOllama
    from langchain_openai import ChatOpenAI

    openai = ChatOpenAI(model="m", api_key="sk-test", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    assert structured_mode(openai) == "response_format"
    assert structured_mode(ChatAnthropic(model_name="m", api_key="k")) == "native"  # type: ignore[call-arg,arg-type]
    assert structured_mode(ChatOllama(model="m")) == "native"
    assert structured_mode(ScriptedChatModel()) == "prompt"


def test_a_model_class_may_declare_its_mode() -> None:
    from factdebate.tools.models.hf_local import HFLocalChatModel

    assert HFLocalChatModel.structured_output_mode == "prompt"

    class Declared(ToolCallingFake):
        structured_output_mode: ClassVar[str] = "prompt"

    assert structured_mode(Declared()) == "prompt"
    assert structured_mode(ToolCallingFake()) == "native"


def test_a_schema_is_built_once_per_class(monkeypatch: Any) -> None:
    """pydantic rebuilds a JSON schema on every call; structured calls reuse the first one."""

    class Once(BaseModel):
        answer: str

    built: list[int] = []
    original = Once.model_json_schema

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(Once, "model_json_schema", counting)
    first = schema_prompt("Q?", Once)
    assert schema_prompt("Q?", Once) == first and '"answer"' in first
    assert len(built) == 1


def test_ragas_prompts_render_the_same_text_with_their_schema_built_once(monkeypatch: Any) -> None:
    """RAGAS rebuilds an output schema for every prompt; ours reads a one-time copy."""
    from ragas.metrics.collections.answer_relevancy.util import (
        AnswerRelevanceInput,
        AnswerRelevanceOutput,
        AnswerRelevancePrompt,
    )
    from ragas.metrics.collections.faithfulness.util import (
        NLIStatementInput,
        NLIStatementPrompt,
        StatementGeneratorInput,
        StatementGeneratorPrompt,
    )

    from factdebate.tools.scoring.ragas_metrics import fast_prompt

    cases = [
        (AnswerRelevancePrompt, AnswerRelevanceInput(response="It is in Paris.")),
        (StatementGeneratorPrompt, StatementGeneratorInput(question="Q?", answer="A. B.")),
        (NLIStatementPrompt, NLIStatementInput(context="ctx", statements=["A.", "B."])),
    ]
    for prompt_class, data in cases:
        assert fast_prompt(prompt_class()).to_string(data) == prompt_class().to_string(data)
    built: list[int] = []
    original = AnswerRelevanceOutput.model_json_schema

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(AnswerRelevanceOutput, "model_json_schema", counting)
    data = AnswerRelevanceInput(response="Elsewhere.")
    for _ in range(3):
        fast_prompt(AnswerRelevancePrompt()).to_string(data)
    assert built == []  # built once, before this test counted (or at its first use)
    AnswerRelevancePrompt().to_string(data)
    assert built == [1]  # RAGAS's own prompt rebuilds it on every render
