"""Where a collection's manifest is kept: a row in Milvus, copied to a file under the data home."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from factdebate.tools.core.files import write_atomic
from factdebate.tools.core.secrets import redact
from factdebate.tools.retrieval.manifest import (
    IndexMismatchError,
    IndexMissingError,
    Manifest,
    is_server,
    manifest_path,
)
from factdebate.tools.retrieval.milvus import milvus_client, milvus_lock, milvus_uri

MANIFESTS = "factdebate_manifests"  # the Milvus collection holding manifests (server or Lite)


def _manifests(client: Any) -> None:
    """Create the server's manifest collection on first use (a key, the JSON, a dummy vector)."""
    from pymilvus import DataType, MilvusClient

    if client.has_collection(MANIFESTS):
        return
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("name", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("manifest", DataType.VARCHAR, max_length=65_535)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)  # Milvus 2.3 needs one
    index = MilvusClient.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="L2")
    client.create_collection(collection_name=MANIFESTS, schema=schema, index_params=index)


def read_shared_manifest(collection: str, uri: str) -> str | None:
    """The manifest JSON of ``collection`` stored in Milvus, or None."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        if not client.has_collection(MANIFESTS):
            return None
        client.load_collection(MANIFESTS)
        rows = client.get(collection_name=MANIFESTS, ids=[collection], output_fields=["manifest"])
    return str(rows[0]["manifest"]) if rows else None


def write_shared_manifest(collection: str, text: str, uri: str) -> None:
    """Store (replace) the manifest JSON of ``collection`` in Milvus."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        _manifests(client)
        client.upsert(
            collection_name=MANIFESTS,
            data=[{"name": collection, "manifest": text, "vector": [0.0, 0.0]}],
        )
        client.flush(collection_name=MANIFESTS)


def read_manifest(collection: str, uri: str = "") -> Manifest | None:
    """The manifest of ``collection``, or None when it was never built.

    The manifest stored in Milvus is the one that counts: every process and machine pointed
    at the same server or Milvus Lite file (``uri``) reads the same. A Lite file that holds
    no manifest (built before manifests were kept there) is read through the data home's
    copy made for it. The data home's own Lite file (empty ``uri``) is read through the
    home's copy only, so a process that only looks never holds that file (it serves one
    process at a time).

    Raises:
        IndexMismatchError: an unreadable manifest.
    """
    path = manifest_path(collection)
    where = str(path)
    try:
        text = None
        if uri:
            where = f"in Milvus at {redact(uri) if is_server(uri) else milvus_uri(uri)}"
            text = read_shared_manifest(collection, uri)
        if text is None and not is_server(uri):
            where = str(path)
            text = _home_copy(path, milvus_uri(uri))
        if text is None:
            return None
        raw: dict[str, Any] = json.loads(text)
        return Manifest(**raw)
    except (ValueError, TypeError) as exc:
        raise IndexMismatchError(f"unreadable index manifest {where}: {exc}") from exc


def _home_copy(path: Path, lite_file: str) -> str | None:
    """The home's manifest text if written for ``lite_file`` (or unrecorded), else None."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        built_for = json.loads(text).get("milvus_uri", "")
    except (ValueError, AttributeError):
        return text  # unreadable: reported by the caller
    return text if built_for in ("", lite_file) else None


def write_manifest(manifest: Manifest, uri: str = "") -> None:
    """Atomically replace the manifest: the swap to a new build.

    It is first upserted into Milvus (server or Lite file: where other processes and
    machines read it), then copied under the data home (temp file, fsync, rename).
    """
    write_shared_manifest(manifest.collection, json.dumps(asdict(manifest)), uri)
    write_atomic(manifest_path(manifest.collection), json.dumps(asdict(manifest), indent=2))


def live_manifest(collection: str, uri: str = "") -> Manifest:
    """The manifest retrieval must follow, checked against the installed engines.

    Raises:
        IndexMissingError: never built. IndexMismatchError: built by an incompatible version.
    """
    manifest = read_manifest(collection, uri)
    if manifest is None:
        raise IndexMissingError(collection)
    manifest.check_engines()
    return manifest
