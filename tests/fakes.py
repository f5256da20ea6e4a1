"""Scripted chat models for tests: answers chosen by prompt content, calls recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Rule = tuple[str | Callable[[str], bool], str | Callable[[str], str] | BaseException]


class ScriptedChatModel(BaseChatModel):
    """Answers with the first rule whose key occurs in the prompt (or whose predicate holds).

    A rule's answer may be text, a function of the prompt, or an exception to raise. Every
    prompt is recorded in ``prompts``; usage is reported as word counts so cost is testable.
    """

    rules: list[Any] = Field(default_factory=list)
    default: str = "I cannot tell.\n**NOT ENOUGH INFO**"
    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        self.prompts.append(prompt)
        answer: Any = self.default
        for key, value in self.rules:
            if key(prompt) if callable(key) else key in prompt:
                answer = value
                break
        if isinstance(answer, BaseException):
            raise answer
        text = answer(prompt) if callable(answer) else answer
        words_in, words_out = len(prompt.split()), len(text.split())
        message = AIMessage(
            text,
            usage_metadata={
                "input_tokens": words_in,
                "output_tokens": words_out,
                "total_tokens": words_in + words_out,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def calls_with(self, marker: str) -> int:
        """How many recorded prompts contain ``marker``."""
        return sum(marker in p for p in self.prompts)


def ragas_rules(faithful: bool = True, relevant_question: str | None = None) -> Sequence[Rule]:
    """Rules answering RAGAS's statement, verdict and question-generation prompts."""
    verdict = 1 if faithful else 0

    def statements(prompt: str) -> str:
        return '{"statements": ["The answer states a fact about the claim."]}'

    def verdicts(prompt: str) -> str:
        return (
            '{"statements": [{"statement": "The answer states a fact about the claim.", '
            f'"reason": "checked", "verdict": {verdict}}}]}}'
        )

    def question(prompt: str) -> str:
        import json

        q = relevant_question if relevant_question is not None else "What is this about?"
        return json.dumps({"question": q, "noncommittal": 0})

    return [
        ("StatementGeneratorOutput", statements),
        ("NLIStatementOutput", verdicts),
        ("AnswerRelevanceOutput", question),
    ]
