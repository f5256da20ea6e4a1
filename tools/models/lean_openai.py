"""An OpenAI chat model whose plain requests cost less Python: ChatOpenAI without typed detours."""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import _handle_openai_api_error, _handle_openai_bad_request


class LeanChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that posts its chat-completion payload as built, and reads the JSON back.

    For each request the OpenAI SDK walks the whole payload against its typed parameters
    (messages, the JSON schema of a structured answer), then builds typed response objects
    that LangChain dumps back into a dict: about half of a call's CPU time, all of it on the
    event loop, where ten claims at once queue behind each other's calls. The payload is the
    one LangChain builds; it goes out through the same client (its base URL, key, timeout,
    connection pool and HTTP error classes), so errors, retries and headers are as before.
    Streaming and the Responses API keep ChatOpenAI's own path.
    """

    structured_output_mode: ClassVar[str] = "response_format"
    """How ``tools.models.llm`` asks it for JSON (as for ChatOpenAI: a JSON-schema format)."""

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        plain = isinstance(payload.get("response_format", {}), dict)
        if payload.get("stream") or not plain or self._use_responses_api(payload):
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        payload.pop("stream", None)
        try:
            response = await self.root_async_client.post(
                "/chat/completions", body=payload, cast_to=httpx.Response
            )
        except openai.BadRequestError as exc:
            _handle_openai_bad_request(exc)
            raise
        except openai.APIError as exc:
            _handle_openai_api_error(exc)
            raise
        info = {"headers": dict(response.headers)} if self.include_response_headers else {}
        return self._create_chat_result(response.json(), info)
