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
  indexed under the server's data home;
- ``FACTDEBATE_SERVED_EVIDENCE``: frozen evidence (run folders, snapshot files, knowledge
  stores on the server's disk) a run may read with ``evidence_from``; none by default.

The search cache (``search_cache_ttl_s``, ``search_cache_max_mb``) is the operator's alone:
``FACTDEBATE_SEARCH_CACHE_TTL_S`` / ``..._MAX_MB`` set it; a client may send only the default.
The pacing limits (``rpm``, ``tpm``, ``max_in_flight``) set by ``FACTDEBATE_RPM`` and the like
are the account's: a client may lower them for its run, never raise them.

``served(cls)`` is a method's settings class as a server builds it: LangGraph builds a run's
settings object from the run's context when the run starts, before any node, on every route,
so building a served one runs this policy. The CLI and the Python API build the plain class:
their user is the operator.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, TypeVar

from factdebate.nodes.context import Context, env_number
from factdebate.tools.core.errors import SettingsError
from factdebate.tools.core.home import home_dir

C = TypeVar("C", bound=Context)
MODEL_FIELDS = frozenset({"model", "debater_model", "judge_model", "scorer_model", "screen_model"})
MODEL_LIST_FIELDS = frozenset({"juror_models", "expert_models"})
ENCODER_FIELDS = frozenset({"embed_model", "rerank_model", "relevance_encoder"})
MODELS_ENV = "FACTDEBATE_SERVED_MODELS"
MILVUS_ENV = "FACTDEBATE_SERVED_MILVUS_URIS"
ENCODERS_ENV = "FACTDEBATE_SERVED_ENCODERS"
COLLECTIONS_ENV = "FACTDEBATE_SERVED_COLLECTIONS"
EVIDENCE_ENV = "FACTDEBATE_SERVED_EVIDENCE"
PATH_FIELDS = frozenset({"milvus_uri", "collection", "evidence_from"})
OPERATOR_FIELDS = MODEL_FIELDS | MODEL_LIST_FIELDS | ENCODER_FIELDS | PATH_FIELDS
"""Settings whose values can reach the network or the disk: a client picks from a list."""
OPERATOR_ONLY_FIELDS = frozenset({"search_cache_ttl_s", "search_cache_max_mb"})
"""Settings only the operator sets (``FACTDEBATE_<FIELD>`` in the server's environment): a
client may send the field's default, which the server reads as the operator's value."""
LIMIT_FIELDS = frozenset({"rpm", "tpm", "max_in_flight"})
"""Pacing limits: a client may lower the operator's ``FACTDEBATE_<FIELD>``, never raise it."""


def _listed(name: str) -> set[str]:
    """The comma-separated values of environment variable ``name``."""
    return {v.strip() for v in os.environ.get(name, "").split(",") if v.strip()}


def served_models() -> set[str]:
    """Model strings a client may name: the allow-list, the operator's defaults, registered ones."""
    from factdebate.tools.models.providers import registered_models

    chosen = _listed(MODELS_ENV) | {"local"}
    defaults = {os.environ.get(f"FACTDEBATE_{f.upper()}", "").strip() for f in MODEL_FIELDS}
    return (chosen | defaults | set(registered_models())) - {""}


def collection_indexed(name: str) -> bool:
    """Whether the operator indexed ``name`` under the server's data home (a manifest exists).

    One ``stat`` of the manifest file: the data home is neither created nor listed.
    """
    from factdebate.tools.retrieval.manifest import manifest_path

    try:
        return manifest_path(name, home=home_dir()).is_file()
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


def _operator_values(classes: Iterable[type], name: str) -> set[Any]:
    """The values of the operator-only field ``name``: its defaults and the operator's own."""
    found: set[Any] = set()
    for cls in classes:
        for f in fields(cls):
            if f.name == name and f.default is not MISSING:
                found |= {f.default, env_number(name, f.default)}
    return found


def _refusal(name: str, value: Any, allowed: str) -> str:
    """The one-line refusal of a value the operator did not allow."""
    shown = repr(value)[:80]
    return f"setting {name}={shown} is not allowed on this server: {allowed}"


def operator_problem(settings: Mapping[str, Any], classes: Iterable[type]) -> str | None:
    """Why a client may not send ``settings`` to this server, or None when it may.

    ``classes`` are the settings classes the request may target (one method's, or several
    when the target is not known); their defaults are always allowed.
    """
    classes = list(classes)
    for name in sorted(LIMIT_FIELDS & set(settings)):
        ceiling, value = env_number(name, 0), settings[name]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        allowed = not number or value in _operator_values(classes, name)
        if ceiling > 0 and not allowed and value > ceiling:
            env = f"FACTDEBATE_{name.upper()}"
            return _refusal(name, value, f"a run may only lower the operator's {env}")
    for name in sorted(OPERATOR_ONLY_FIELDS & set(settings)):
        if settings[name] not in _operator_values(classes, name):
            env = f"FACTDEBATE_{name.upper()}"
            return _refusal(name, settings[name], f"the operator sets it ({env})")
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
        if text != value and name in PATH_FIELDS | ENCODER_FIELDS:  # " " is a path too
            return _refusal(name, value, "a path or URI with spaces around it is another path")
        if text in _defaults(classes, name):
            continue
        if name == "evidence_from" and value not in _listed(EVIDENCE_ENV):  # as listed, exactly
            return _refusal(name, value, f"name frozen evidence listed in {EVIDENCE_ENV}")
        if name in MODEL_FIELDS and text not in served_models():
            return _refusal(name, value, f"name a model listed in {MODELS_ENV}")
        if name == "milvus_uri" and text not in _listed(MILVUS_ENV):
            return _refusal(name, value, f"name a Milvus URI listed in {MILVUS_ENV}")
        if name in ENCODER_FIELDS and text not in _listed(ENCODERS_ENV):
            return _refusal(name, value, f"name an encoder listed in {ENCODERS_ENV}")
        if (
            name == "collection"
            and text not in _listed(COLLECTIONS_ENV)
            and not collection_indexed(text)
        ):
            return _refusal(name, value, "name a collection this server has indexed")
    return None


def check_served(settings: Context) -> None:
    """Raise SettingsError when built ``settings`` hold a value the operator did not allow."""
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    problem = operator_problem(
        {
            k: v
            for k, v in values.items()
            if k in OPERATOR_FIELDS | OPERATOR_ONLY_FIELDS | LIMIT_FIELDS
        },
        [type(settings)],
    )
    if problem:
        raise SettingsError(problem)


@cache
def served(cls: type[C]) -> type[C]:
    """``cls`` as a server builds it for a client: building one also runs the operator policy.

    The subclass keeps ``cls``'s name, fields, defaults and descriptions (Studio's settings
    form and error messages read the same), and nodes that ask for ``cls`` accept it.
    """
    if getattr(cls, "__served__", False):
        return cls

    def __post_init__(self: Any) -> None:
        cls.__post_init__(self)
        check_served(self)

    namespace = {
        "__post_init__": __post_init__,
        "__served__": True,
        "__doc__": cls.__doc__,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    }
    return type(cls.__name__, (cls,), namespace)
