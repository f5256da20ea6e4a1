"""Where a collection's manifest is kept: a file under the data home, and a server's row."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from factdebate.tools.core.files import write_atomic
from factdebate.tools.retrieval.manifest import (
    IndexMismatchError,
    IndexMissingError,
    Manifest,
    is_server,
    manifest_path,
)
from factdebate.tools.retrieval.milvus import milvus_client, milvus_lock, milvus_uri

MANIFESTS = "factdebate_manifests"  # the Milvus collection holding manifests on a server


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
    """The manifest JSON of ``collection`` stored in the Milvus server, or None."""
    client = milvus_client(milvus_uri(uri))
    with milvus_lock:
        if not client.has_collection(MANIFESTS):
            return None
        client.load_collection(MANIFESTS)
        rows = client.get(collection_name=MANIFESTS, ids=[collection], output_fields=["manifest"])
    return str(rows[0]["manifest"]) if rows else None


def write_shared_manifest(collection: str, text: str, uri: str) -> None:
    """Store (replace) the manifest JSON of ``collection`` in the Milvus server."""
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

    With a Milvus server URI the manifest stored in the server is the one that counts (every
    worker pointed at the server reads the same); otherwise the file under the data home.

    Raises:
        IndexMismatchError: an unreadable manifest.
    """
    path = manifest_path(collection)
    try:
        if is_server(uri):
            text = read_shared_manifest(collection, uri)
            if text is None:
                return None
        else:
            text = path.read_text(encoding="utf-8")
        raw: dict[str, Any] = json.loads(text)
        return Manifest(**raw)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        where = f"in Milvus at {uri}" if is_server(uri) else str(path)
        raise IndexMismatchError(f"unreadable index manifest {where}: {exc}") from exc


def write_manifest(manifest: Manifest, uri: str = "") -> None:
    """Atomically replace the manifest: the swap to a new build.

    With a Milvus server URI it is first upserted into the server (where other processes
    and machines read it); a local copy is always written (temp file, fsync, rename).
    """
    if is_server(uri):
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
