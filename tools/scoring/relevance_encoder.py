"""The encoder of answer relevance by name: a sentence-transformers model or provider embeddings."""

from __future__ import annotations

import re
import threading
from functools import cache
from pathlib import Path

from langchain_core.embeddings import Embeddings

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.retrieval.embeddings import (
    canonical_encoder,
    load_encoder,
)

_PROVIDER = re.compile(r"^([a-z][a-z0-9_-]*):([^/\\].*)$")
_LOADING = threading.Lock()


def is_provider_encoder(name: str) -> bool:
    """Whether ``name`` is a provider string (``openai:text-embedding-3-small``), not a model id."""
    name = name.strip()
    return bool(_PROVIDER.match(name)) and not Path(name).exists()


def relevance_label(name: str) -> str:
    """How a relevance score records its encoder: MiniLM's name, a provider string or a model id.

    The name an index would record (``canonical_encoder``): a provider string is no folder,
    so it comes back as given.

    Raises:
        ModelConfigError: the name is longer than the limit on encoder names.
    """
    return canonical_encoder(name)


def relevance_embeddings(name: str) -> Embeddings:
    """The embeddings that answer relevance uses for ``name`` (blocking: loads a model once).

    The shipped MiniLM is the shared one (the retrieval tool's, when it uses MiniLM too); any
    other sentence-transformers id or folder loads as retrieval would load it; a provider
    string goes to LangChain's ``init_embeddings`` (its API key from the environment).

    Raises:
        ModelConfigError: the encoder cannot be loaded.
    """
    label = relevance_label(name)
    if is_provider_encoder(label):
        return _provider_embeddings(label)
    return load_encoder(label).embeddings


@cache
def _provider_embeddings(name: str) -> Embeddings:
    from langchain.embeddings import init_embeddings

    provider, model = name.split(":", 1)
    try:
        with _LOADING:
            return init_embeddings(model, provider=provider)
    except Exception as exc:  # unknown provider, missing package or key: many types
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise ModelConfigError(
            f"cannot load relevance encoder {name!r}: {type(exc).__name__}: {first[:200]}"
        ) from exc
