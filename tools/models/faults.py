"""What a provider's answer or failure means: a transient fault worth retrying, or a cut answer."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage

TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_TRANSIENT_NAMES = ("ratelimit", "timeout", "connection", "overloaded", "serviceunavailable")


def status_of(exc: BaseException) -> int | None:
    """HTTP status carried by a provider exception, if any."""
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether retrying may help: timeouts, connection drops, rate limits, 5xx overloads."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if status_of(exc) in TRANSIENT_STATUS:
        return True
    names = [cls.__name__.lower() for cls in type(exc).__mro__]
    return any(marker in name for name in names for marker in _TRANSIENT_NAMES)


def is_rate_limit(exc: BaseException) -> bool:
    """A 429 or an exception class named like a rate limit."""
    return status_of(exc) == 429 or "ratelimit" in type(exc).__name__.lower()


_CUT_REASONS = {
    "finish_reason": ("length",),  # OpenAI and OpenAI-compatible servers, llama.cpp
    "stop_reason": ("max_tokens",),  # Anthropic
    "done_reason": ("length",),  # Ollama
}


def was_cut(message: BaseMessage) -> bool:
    """Whether the provider reports that ``message`` stopped at the output cap."""
    meta = getattr(message, "response_metadata", None) or {}
    return any(meta.get(key) in values for key, values in _CUT_REASONS.items())


def cut_completion(exc: BaseException) -> BaseMessage | None:
    """The partial answer carried by an SDK error raised for a cut structured answer.

    The OpenAI SDK raises ``LengthFinishReasonError`` (with the completion attached) instead
    of returning a structured answer that hit the cap; it is a truncation, not a failure.
    """
    completion = getattr(exc, "completion", None)
    choices = getattr(completion, "choices", None)
    if not choices or getattr(choices[0], "finish_reason", None) != "length":
        return None
    usage = getattr(completion, "usage", None)
    message = AIMessage(
        content=getattr(choices[0].message, "content", None) or "",
        response_metadata={"finish_reason": "length"},
    )
    if usage is not None:
        message.usage_metadata = {
            "input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
            "total_tokens": int(getattr(usage, "total_tokens", 0) or 0),
        }
    return message
