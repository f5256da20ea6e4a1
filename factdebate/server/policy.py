"""What a server's clients may set: settings that reach the network or the disk are the operator's.

A served run's context comes from its clients. Model strings (a URL inside
``openai-compatible:M@URL``, a folder after ``hf-local:``), ``milvus_uri``, encoder and
reranker names (a sentence-transformers folder) and collections name hosts and paths, so a
client may only pick values the operator allowed in the server's environment:

- ``FACTDEBATE_SERVED_MODELS``: model strings clients may name (comma-separated), beside the
  operator's own ``FACTDEBATE_MODEL``/``..._MODEL`` defaults, models registered in the
  server's code and ``local`` (the embedded model, a file shipped with the package);
- ``FACTDEBATE_SERVED_MILVUS_URIS``: Milvus URIs, beside the embedded default (empty: the
  Milvus Lite file under the server's data home);
- ``FACTDEBATE_SERVED_ENCODERS``: names for ``embed_model``, ``rerank_model`` and
  ``relevance_encoder``, beside each field's default;
- ``FACTDEBATE_SERVED_COLLECTIONS``: collections, beside ``default`` and those the operator
  indexed under the server's data home.

The CLI and the Python API apply none of this: their user is the operator.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, fields
from typing import Any

MODEL_FIELDS = frozenset({"model", "debater_model", "judge_model", "scorer_model"})
MODEL_LIST_FIELDS = frozenset({"juror_models", "expert_models"})
ENCODER_FIELDS = frozenset({"embed_model", "rerank_model", "relevance_encoder"})
MODELS_ENV = "FACTDEBATE_SERVED_MODELS"
MILVUS_ENV = "FACTDEBATE_SERVED_MILVUS_URIS"
ENCODERS_ENV = "FACTDEBATE_SERVED_ENCODERS"
COLLECTIONS_ENV = "FACTDEBATE_SERVED_COLLECTIONS"
OPERATOR_FIELDS = MODEL_FIELDS | MODEL_LIST_FIELDS | ENCODER_FIELDS | {"milvus_uri", "collection"}
"""Settings whose values can reach the network or the disk: a client picks from a list."""


def _listed(name: str) -> set[str]:
    """The comma-separated values of environment variable ``name``."""
    return {v.strip() for v in os.environ.get(name, "").split(",") if v.strip()}


def served_models() -> set[str]:
    """Model strings a client may name: the allow-list, the operator's defaults, registered ones."""
    from factdebate.tools.models.providers import registered_models

    chosen = _listed(MODELS_ENV) | {"local"}
    defaults = {os.environ.get(f"FACTDEBATE_{f.upper()}", "").strip() for f in MODEL_FIELDS}
    return (chosen | defaults | set(registered_models())) - {""}


def _collection_indexed(name: str) -> bool:
    """Whether the operator indexed ``name`` under the server's data home (a manifest exists)."""
    from factdebate.tools.retrieval.manifest import manifest_path

    try:
        return manifest_path(name).is_file()
    except ValueError:  # not a collection name at all
        return False


def _defaults(classes: Iterable[type], name: str) -> set[str]:
    """The default values of field ``name`` across the settings ``classes``."""
    found: set[str] = set()
    for cls in classes:
        for f in fields(cls):
            if f.name == name and f.default is not MISSING:
                found.add(str(f.default))
    return found


def _refusal(name: str, value: Any, allowed: str) -> str:
    """The one-line 422 detail for a value the operator did not allow."""
    shown = repr(value)[:80]
    return f"setting {name}={shown} is not allowed on this server: {allowed}"


def operator_problem(settings: Mapping[str, Any], classes: Iterable[type]) -> str | None:
    """Why a client may not send ``settings`` to this server, or None when it may.

    ``classes`` are the settings classes the request may target (one method's, or every
    method's when an assistant is named by id); their defaults are always allowed.
    """
    classes = list(classes)
    for name in sorted(OPERATOR_FIELDS & set(settings)):
        value = settings[name]
        if name in MODEL_LIST_FIELDS:
            items = value if isinstance(value, list | tuple) else [value]
            bad = [v for v in items if not isinstance(v, str) or v.strip() not in served_models()]
            if bad:
                return _refusal(name, bad[0], f"name models from {MODELS_ENV}")
            continue
        if not isinstance(value, str):
            continue  # the type check answers it
        text = value.strip()
        if text in _defaults(classes, name):
            continue
        if name in MODEL_FIELDS and text not in served_models():
            return _refusal(name, value, f"name a model listed in {MODELS_ENV}")
        if name == "milvus_uri" and text not in _listed(MILVUS_ENV):
            return _refusal(name, value, f"name a Milvus URI listed in {MILVUS_ENV}")
        if name in ENCODER_FIELDS and text not in _listed(ENCODERS_ENV):
            return _refusal(name, value, f"name an encoder listed in {ENCODERS_ENV}")
        if (
            name == "collection"
            and text not in _listed(COLLECTIONS_ENV)
            and not _collection_indexed(text)
        ):
            return _refusal(name, value, "name a collection this server has indexed")
    return None
