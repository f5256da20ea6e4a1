"""Turn a model setting ('local', 'openai:gpt-4o-mini', a URL, an object) into a chat model."""

from __future__ import annotations

import os
import threading
from typing import Any

from langchain_core.language_models import BaseChatModel

from tools.records import ModelConfigError

ModelSpec = str | BaseChatModel

_registered: dict[str, BaseChatModel] = {}
_cache: dict[tuple[str, float, int, float], BaseChatModel] = {}
_lock = threading.Lock()


def register_model(name: str, model: BaseChatModel) -> str:
    """Make a ready chat-model object available under ``name`` for any role setting."""
    _registered[name] = model
    return name


def resolve_model(
    spec: ModelSpec, *, temperature: float = 0.0, max_tokens: int = 512, timeout: float = 300.0
) -> BaseChatModel:
    """Return the chat model a setting names (loaded once and cached).

    Accepted forms: a ``BaseChatModel`` object; a name given to ``register_model``;
    ``local`` (SmolLM2-135M through llama.cpp, no network); ``openai-compatible:MODEL@URL``
    for vLLM, a llama.cpp server and similar; any ``provider:model`` string LangChain's
    ``init_chat_model`` knows (``openai:gpt-4o-mini``, ``anthropic:...``, ``ollama:...``).
    """
    if isinstance(spec, BaseChatModel):
        return spec
    spec = spec.strip()
    if spec in _registered:
        return _registered[spec]
    key = (spec, temperature, max_tokens, timeout)
    with _lock:
        if key not in _cache:
            _cache[key] = _build(spec, temperature, max_tokens, timeout)
        return _cache[key]


def loaded_model(
    spec: ModelSpec, *, temperature: float = 0.0, max_tokens: int = 512, timeout: float = 300.0
) -> BaseChatModel | None:
    """The model ``resolve_model`` would return when it is ready without loading, else None."""
    if isinstance(spec, BaseChatModel):
        return spec
    spec = spec.strip()
    if spec in _registered:
        return _registered[spec]
    return _cache.get((spec, temperature, max_tokens, timeout))


def _build(spec: str, temperature: float, max_tokens: int, timeout: float) -> BaseChatModel:
    if spec == "local":
        from tools.local_llm import load_local_model

        return load_local_model(temperature=temperature, max_tokens=max_tokens)
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ModelConfigError(
            f"unknown model {spec!r}: use 'local', 'PROVIDER:MODEL' (e.g. openai:gpt-4o-mini) "
            "or 'openai-compatible:MODEL@URL'"
        )
    if provider == "openai-compatible":
        model_name, at, base_url = name.rpartition("@")
        if not at or not model_name or not base_url.startswith(("http://", "https://")):
            raise ModelConfigError(
                f"expected openai-compatible:MODEL@http://host:port/v1, got {spec!r}"
            )
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=model_name,
            base_url=base_url,
            api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),  # type: ignore[arg-type]
            temperature=temperature,
            max_completion_tokens=max_tokens,
            timeout=timeout,
            max_retries=0,
        )
    from langchain.chat_models import init_chat_model

    kwargs: dict[str, Any] = {"temperature": temperature}
    if provider == "ollama":
        kwargs["num_predict"] = max_tokens
    else:
        kwargs.update(max_tokens=max_tokens, timeout=timeout, max_retries=0)
    try:
        model: BaseChatModel = init_chat_model(name, model_provider=provider, **kwargs)
        return model
    except Exception as exc:  # provider packages raise many types; report one clear error
        raise ModelConfigError(f"cannot load model {spec!r}: {_one_line(exc)}") from exc


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
