"""Turn a model setting ('local', 'openai:gpt-4o-mini', a URL, an object) into a chat model."""

from __future__ import annotations

import os
import threading
from typing import Any

from langchain_core.language_models import BaseChatModel

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.core.secrets import install_secret_filters, redact

ModelSpec = str | BaseChatModel

LOCAL_OUTPUT_CAP = 512
"""The embedded 135M model's output cap, whatever the settings: its useful answers are short,
and a runaway loop then costs seconds, not minutes."""
_registered: dict[str, BaseChatModel] = {}
_cache: dict[tuple[str, float, int, float, float], BaseChatModel] = {}
_lock = threading.Lock()


def register_model(name: str, model: BaseChatModel) -> str:
    """Make a ready chat-model object available under ``name`` for any role setting."""
    _registered[name] = model
    return name


def registered_models() -> tuple[str, ...]:
    """Names given to ``register_model`` so far (objects in the process, no address)."""
    return tuple(_registered)


OPENAI_ORIGIN = "https://api.openai.com"
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (lower case, default ports written out)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    except ValueError:
        port = 0
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def endpoint_key(base_url: str) -> str:
    """The API key an ``openai-compatible`` endpoint at ``base_url`` is sent.

    ``OPENAI_COMPATIBLE_API_KEY`` is the key for self-hosted endpoints. ``OPENAI_API_KEY``
    is OpenAI's: it goes only to OpenAI's own origin or to the origin of ``OPENAI_BASE_URL``
    (where its owner configured it), never to another host a model string names.
    """
    compatible = os.environ.get(COMPATIBLE_KEY_ENV, "")
    if compatible:
        return compatible
    openai_key = os.environ.get("OPENAI_API_KEY", "")
    configured = {_origin(OPENAI_ORIGIN)}
    if os.environ.get("OPENAI_BASE_URL"):
        configured.add(_origin(os.environ["OPENAI_BASE_URL"]))
    if openai_key and _origin(base_url) in configured:
        return openai_key
    return "not-needed"


def resolve_model(
    spec: ModelSpec,
    *,
    temperature: float = 0.0,
    max_tokens: int = 512,
    timeout: float = 300.0,
    top_p: float = 0.0,
) -> BaseChatModel:
    """Return the chat model a setting names (loaded once and cached).

    Accepted forms: a ``BaseChatModel`` object; a name given to ``register_model``;
    ``local`` (SmolLM2-135M through llama.cpp, no network); ``hf:OWNER/REPO/FILE.gguf`` (a
    GGUF chat model from the Hugging Face Hub, downloaded once, run like ``local``);
    ``hf-local:RUN_DIR`` (a moderator trained by ``factdebate train-moderator``: base +
    adapters through transformers); ``openai-compatible:MODEL@URL`` for vLLM, a llama.cpp
    server and similar; any ``provider:model`` string LangChain's ``init_chat_model`` knows
    (``openai:gpt-4o-mini``, ``anthropic:...``, ``ollama:...``).
    ``top_p`` is sent only when above 0 (0 = the provider's default).
    """
    install_secret_filters()  # SDK logs and warnings (LangSmith tracing) are redacted too
    if isinstance(spec, BaseChatModel):
        return spec
    spec = spec.strip()
    if spec in _registered:
        return _registered[spec]
    key = (spec, temperature, max_tokens, timeout, top_p)
    with _lock:
        if key not in _cache:
            _cache[key] = _build(spec, temperature, max_tokens, timeout, top_p)
        return _cache[key]


def is_remote(spec: ModelSpec) -> bool:
    """Whether ``spec`` names a model behind a network endpoint (not an object, not embedded)."""
    if not isinstance(spec, str):
        return False
    spec = spec.strip()
    if spec in _registered or spec == "local" or spec.startswith(("hf:", "hf-local:")):
        return False
    return ":" in spec


def loaded_model(
    spec: ModelSpec,
    *,
    temperature: float = 0.0,
    max_tokens: int = 512,
    timeout: float = 300.0,
    top_p: float = 0.0,
) -> BaseChatModel | None:
    """The model ``resolve_model`` would return when it is ready without loading, else None."""
    if isinstance(spec, BaseChatModel):
        return spec
    spec = spec.strip()
    if spec in _registered:
        return _registered[spec]
    return _cache.get((spec, temperature, max_tokens, timeout, top_p))


def _build(
    spec: str, temperature: float, max_tokens: int, timeout: float, top_p: float
) -> BaseChatModel:
    sampling: dict[str, Any] = {"top_p": top_p} if top_p > 0 else {}
    if spec == "local":
        from factdebate.tools.models.local_llm import load_local_model

        return load_local_model(
            temperature=temperature, max_tokens=min(max_tokens, LOCAL_OUTPUT_CAP), **sampling
        )
    if spec.startswith("hf:"):
        from factdebate.tools.models.hf_gguf import fetch_gguf
        from factdebate.tools.models.local_llm import load_local_model

        path = fetch_gguf(spec)
        return load_local_model(
            temperature=temperature, max_tokens=max_tokens, path=path, **sampling
        )
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ModelConfigError(
            f"unknown model {spec!r}: use 'local', 'PROVIDER:MODEL' (e.g. openai:gpt-4o-mini), "
            "'hf:OWNER/REPO/FILE.gguf' or 'openai-compatible:MODEL@URL'"
        )
    if provider == "hf-local":
        from factdebate.tools.models.hf_local import load_hf_local

        return load_hf_local(name, temperature=temperature, max_tokens=max_tokens)
    if provider == "openai-compatible":
        # The URL starts at the first "@http": a URL may hold "@" itself (user:KEY@host).
        starts = [i for i in (name.find("@http://"), name.find("@https://")) if i >= 0]
        cut = min(starts, default=-1)
        model_name, at, base_url = (name[:cut], "@", name[cut + 1 :]) if cut >= 0 else ("", "", "")
        if not at or not model_name or not base_url.startswith(("http://", "https://")):
            raise ModelConfigError(
                f"expected openai-compatible:MODEL@http://host:port/v1, got {redact(spec)!r}"
            )
        _check_base_url(spec, base_url)
        from factdebate.tools.models.lean_openai import LeanChatOpenAI

        return LeanChatOpenAI(
            model=model_name,
            base_url=base_url,
            api_key=endpoint_key(base_url),  # type: ignore[arg-type]
            temperature=temperature,
            max_completion_tokens=max_tokens,
            timeout=timeout,
            max_retries=0,  # llm.py retries within the call deadline; the SDK's would multiply it
            include_response_headers=True,  # x-ratelimit-* for the pacing to learn from
            **sampling,
        )
    from langchain.chat_models import init_chat_model

    _check_provider(spec, provider)
    kwargs: dict[str, Any] = {"temperature": temperature, **sampling}
    if provider == "ollama":
        kwargs["num_predict"] = max_tokens
    else:
        kwargs.update(max_tokens=max_tokens, timeout=timeout, max_retries=0)
        if provider in ("openai", "azure_openai"):
            kwargs["include_response_headers"] = True
    try:
        if provider == "openai":  # the class init_chat_model builds, with leaner requests
            from factdebate.tools.models.lean_openai import LeanChatOpenAI

            return LeanChatOpenAI(model=name, **kwargs)
        model: BaseChatModel = init_chat_model(name, model_provider=provider, **kwargs)
        return model
    except Exception as exc:  # provider packages raise many types; report one clear error
        raise ModelConfigError(f"cannot load model {spec!r}: {_one_line(exc)}") from exc


OWN_PREFIXES = ("local", "hf:", "hf-local:", "openai-compatible:")
"""The model settings this project reads itself; any other prefix is a LangChain provider."""


def _check_provider(spec: str, provider: str) -> None:
    """Refuse a provider prefix LangChain does not know, listing the prefixes that work."""
    from langchain.chat_models import base

    known = sorted(getattr(base, "_BUILTIN_PROVIDERS", None) or ())
    if not known or provider in known:
        return
    raise ModelConfigError(
        f"unknown model prefix {provider!r} in {redact(spec)!r}: use {', '.join(OWN_PREFIXES)} "
        f"or PROVIDER:MODEL with PROVIDER one of {', '.join(known)}"
    )


def _check_base_url(spec: str, base_url: str) -> None:
    """Refuse a model URL whose host or port does not parse (its credentials never shown).

    ``#``, ``?`` or ``/`` written unencoded inside a password end the host part early, so the
    password's start would be read as a port and sent nowhere sensible.
    """
    import httpx  # the parser of the OpenAI client that sends the calls

    try:
        ok = bool(httpx.URL(base_url).host)
    except (httpx.InvalidURL, ValueError):
        ok = False
    if not ok:
        raise ModelConfigError(
            f"model {redact(spec)}: its URL's host or port does not parse; write '#', '?' "
            "and '/' inside a user name or password percent-encoded (%23, %3F, %2F)"
        )


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


_CAP_FIELDS = ("max_tokens", "max_completion_tokens", "num_predict", "max_new_tokens")
_copies: dict[tuple[int, str, float], tuple[Any, Any]] = {}


def _with_field(model: Any, names: tuple[str, ...], value: float) -> Any:
    """A cached copy of ``model`` whose first field among ``names`` is ``value``.

    Bindings are copied around a copy of the model they wrap; a model with none of the
    fields (a scripted test model, say) comes back as it is.
    """
    bound = getattr(model, "bound", None)
    if bound is not None and hasattr(model, "kwargs"):
        inner = _with_field(bound, names, value)
        return model if inner is bound else model.model_copy(update={"bound": inner})
    fields = getattr(type(model), "model_fields", {})
    name = next((n for n in names if n in fields), None)
    if name is None or getattr(model, name, None) == value:
        return model
    key = (id(model), name, float(value))
    with _lock:
        if key not in _copies or _copies[key][0] is not model:
            _copies[key] = (model, model.model_copy(update={name: value}))
        return _copies[key][1]


def with_output_cap(model: Any, max_tokens: int) -> Any:
    """``model`` with its output cap set to ``max_tokens`` (a copy; the original is kept).

    Works for chat models that keep the cap in a field: OpenAI and compatible servers,
    Anthropic, Ollama, llama.cpp, Hugging Face pipelines.
    """
    return _with_field(model, _CAP_FIELDS, max_tokens)


def with_temperature(model: Any, temperature: float) -> Any:
    """``model`` sampling at ``temperature`` (a copy; the original is kept)."""
    return _with_field(model, ("temperature",), temperature)


def with_seed(model: Any, seed: int) -> Any:
    """``model`` sending sampling seed ``seed`` (a copy), where its class has a ``seed`` field.

    OpenAI and OpenAI-compatible models and Ollama send it with each call; a model without the
    field comes back as it is. The embedded llama.cpp model derives each call's seed from this
    one and the prompt (``local_llm.call_seed``), so its copies sample as their seed says.
    """
    return _with_field(model, ("seed",), seed)


def without_sdk_retries(model: Any) -> Any:
    """``model`` with its SDK's own retries off (a cached copy), so they never multiply ours.

    Models built here already send ``max_retries=0``; a model object given ready-made (say a
    ``ChatOpenAI`` left at the SDK's default of 2) gets a copy with none. The OpenAI SDK
    keeps the count in its client objects, built with the model, so those are copied too.
    """
    bound = getattr(model, "bound", None)
    if bound is not None and hasattr(model, "kwargs"):
        inner = without_sdk_retries(bound)
        return model if inner is bound else model.model_copy(update={"bound": inner})
    if "max_retries" not in getattr(type(model), "model_fields", {}):
        return model
    if getattr(model, "max_retries", None) == 0:
        return model
    key = (id(model), "max_retries", 0.0)
    with _lock:
        if key not in _copies or _copies[key][0] is not model:
            update: dict[str, Any] = {"max_retries": 0}
            for root_name, leaf in (
                ("root_async_client", "async_client"),
                ("root_client", "client"),
            ):
                root = getattr(model, root_name, None)
                if root is not None and hasattr(root, "with_options"):
                    root = root.with_options(max_retries=0)
                    update |= {root_name: root, leaf: root.chat.completions}
            _copies[key] = (model, model.model_copy(update=update))
        return _copies[key][1]
