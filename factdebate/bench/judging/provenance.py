"""What produced a run: every setting, each role's model (a local GGUF by SHA-256), version."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import fields
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from factdebate.tools.core.files import write_atomic
from factdebate.tools.core.home import data_home
from factdebate.tools.core.secrets import redact

PACKAGE = "factdebate"
LIST_FIELDS = ("juror_models", "expert_models")
"""Context fields holding several models (MAD-Fact's jurors and experts)."""
GIT_TIMEOUT_S = 5.0


def run_provenance(context: Any) -> dict[str, Any]:
    """The models, encoders and search a run resolved from ``context``, and the code's version.

    Per-role models come from the context (so a model given by ``--model`` or by
    ``FACTDEBATE_MODEL`` is named alike); keys inside model URLs are redacted. Never raises:
    what cannot be found is None.
    """
    names = {f.name for f in fields(context)}
    models: dict[str, Any] = {"model": redact(str(context.model))}
    for role in ("debater", "judge", "scorer"):
        models[f"{role}_model"] = redact(str(context.model_for(role)))
    for name in LIST_FIELDS:
        listed = getattr(context, name, None) if name in names else None
        if isinstance(listed, list | tuple) and listed:
            models[name] = [redact(str(m)) for m in listed]
    found: dict[str, Any] = {
        "models": models,
        "encoder": _encoder(context) if "collection" in names else None,
        "search_backend": _search(context) if "search_backend" in names else None,
    }
    if "relevance_encoder" in names:  # Tool-MAD's answer-relevance encoder
        found["relevance_encoder"] = redact(str(context.relevance_encoder) or "all-MiniLM-L6-v2")
    if any(m == "local" for m in models.values()):
        found["local_model"] = local_model_identity()
    found["settings"] = effective_settings(context)
    found["version"] = package_version()
    found["commit"] = git_commit()
    return found


def _plain(value: Any) -> Any:
    """A setting's value as JSON holds it (secrets in strings redacted)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return redact(str(value))


def effective_settings(context: Any) -> dict[str, Any]:
    """Every setting the run used, by name: defaults included, not only what was overridden."""
    return {f.name: _plain(getattr(context, f.name)) for f in fields(context)}


def file_sha256(path: Path) -> str:
    """The SHA-256 of a large file, computed once.

    Kept under the data home by path, size and modification time, so a later run reads it
    back instead of hashing again.
    """
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    store = data_home() / "weights" / "sha256.json"
    try:
        known = json.loads(store.read_text(encoding="utf-8")) if store.is_file() else {}
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if isinstance(known.get(key), str):
        return str(known[key])
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    known[key] = digest.hexdigest()
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(store, json.dumps(known, indent=1, sort_keys=True))
    except OSError:  # a read-only home: the digest is still recorded in run.json
        pass
    return str(known[key])


def local_model_identity() -> dict[str, Any] | None:
    """The embedded model's GGUF file: its name and SHA-256 (None when it cannot be found)."""
    from factdebate.tools.models.local_llm import embedded_weights

    try:
        path = embedded_weights()
        return {"file": path.name, "sha256": file_sha256(path)}
    except Exception:  # no weights installed: the run itself reports that
        return None


def _encoder(context: Any) -> str | None:
    """The dense encoder of the run's collection: the setting, else what its index records."""
    from factdebate.tools.retrieval.embeddings import DEFAULT_ENCODER, canonical_encoder

    try:
        if context.embed_model:
            return redact(canonical_encoder(str(context.embed_model)))
        from factdebate.tools.retrieval.embeddings import spec_of
        from factdebate.tools.retrieval.manifest_store import read_manifest

        manifest = read_manifest(context.collection, context.milvus_uri)
        return DEFAULT_ENCODER if manifest is None else redact(spec_of(manifest).name)
    except Exception:  # an unreadable index names no encoder; the run itself reports it
        return None


def _search(context: Any) -> str | None:
    """The web search backend ``search_backend`` resolves to (``auto``: by the keys set)."""
    from factdebate.tools.websearch.backends import web_backend_name

    try:
        return web_backend_name(str(context.search_backend))
    except Exception:  # an unknown name was refused earlier; never fail a run's record
        return None


def package_version() -> str | None:
    """The installed version of the project, or None."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


@cache
def git_commit() -> str | None:
    """The git commit of the project's source (``+dirty`` with local changes), or None."""
    root = Path(__file__).resolve().parents[3]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
        if head.returncode != 0 or not head.stdout.strip():
            return None
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, or it hangs
        return None
    dirty = "+dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return head.stdout.strip() + dirty


def provenance_rows(provenance: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(what, value) pairs naming a run's models, encoders, search, version and commit."""
    if not provenance:
        return [("models", "not recorded (a run from before they were)")]
    models = dict(provenance.get("models") or {})
    base = str(models.pop("model", ""))
    roles = {k.removesuffix("_model"): v for k, v in models.items() if isinstance(v, str)}
    if all(v == base for v in roles.values()):
        shown = [("model of every role", base)]
    else:
        shown = [("model", base), *((f"{role} model", str(v)) for role, v in roles.items())]
    shown += [(k.replace("_", " "), ", ".join(v)) for k, v in models.items() if isinstance(v, list)]
    if isinstance(local := provenance.get("local_model"), dict):
        shown.append(("local model file", f"{local.get('file')} sha256 {local.get('sha256')}"))
    for key in ("encoder", "relevance_encoder", "search_backend", "version", "commit"):
        if key in provenance:
            value = provenance[key]
            shown.append((key.replace("_", " "), "unknown" if value is None else str(value)))
    return shown


def provenance_line(provenance: dict[str, Any] | None) -> str:
    """One line of ``provenance_rows`` for a Markdown report."""
    return "; ".join(f"{what} `{value}`" for what, value in provenance_rows(provenance))
