"""One build of a collection at a time, across processes and machines: a lease kept in Milvus."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from factdebate.tools.core.secrets import redact
from factdebate.tools.retrieval.manifest import IndexUnavailableError, is_server
from factdebate.tools.retrieval.milvus import milvus_client, milvus_lock, milvus_uri

LEASES = "factdebate_leases"  # the Milvus collection holding one lease row per collection built
LEASE_S = 300.0  # a lease not renewed for this long is free (its builder was killed elsewhere)
RENEW_S = 60.0  # how often a build renews its lease
SETTLE_S = 1.0  # a server: wait this long after taking a lease, then check it is still ours
log = logging.getLogger("factdebate")


class IndexBusyError(IndexUnavailableError):
    """Another process is building the same collection in the same Milvus store."""


@dataclass
class Lease:
    """A held build lease: ``check`` raises once another builder has taken it over."""

    collection: str
    uri: str
    owner: str
    lost: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        """Raise ``IndexBusyError`` when the lease expired and another build took it."""
        if self.lost.is_set():
            raise IndexBusyError(
                f"the build lease of {self.collection!r} was taken over by another process "
                f"while this build ran (not renewed within {LEASE_S:.0f} s); nothing was swapped"
            )


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _dead_here(owner: str) -> bool:
    """Whether ``owner`` is a process of this machine that no longer runs (killed)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not (pid.isascii() and pid.isdigit()) or len(pid) > 9:
        return False  # another machine's, or not a process id (int() takes "²" and "٣")
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists under another user
        return False
    return False


def _ensure(client: Any) -> None:
    """Create the lease collection on first use (name, owner, expiry, a dummy vector)."""
    from pymilvus import DataType, MilvusClient

    if not client.has_collection(LEASES):
        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("name", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("owner", DataType.VARCHAR, max_length=512)
        schema.add_field("expires", DataType.INT64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)  # Milvus 2.3 needs one
        index = MilvusClient.prepare_index_params()
        index.add_index("vector", index_type="FLAT", metric_type="L2")
        client.create_collection(
            collection_name=LEASES,
            schema=schema,
            index_params=index,
            consistency_level="Strong",
        )
    client.load_collection(LEASES)


def _holder(client: Any, collection: str) -> tuple[str, float] | None:
    """The owner of ``collection``'s lease and when it expires (epoch seconds), or None."""
    rows = client.get(collection_name=LEASES, ids=[collection], output_fields=["owner", "expires"])
    return (str(rows[0]["owner"]), int(rows[0]["expires"]) / 1000) if rows else None


def _write(client: Any, collection: str, owner: str) -> None:
    expires = int((time.time() + LEASE_S) * 1000)
    row = {"name": collection, "owner": owner, "expires": expires, "vector": [0.0, 0.0]}
    client.upsert(collection_name=LEASES, data=[row])
    client.flush(collection_name=LEASES)


def _busy(collection: str, uri: str, holder: tuple[str, float]) -> IndexBusyError:
    where = f"the Milvus server at {redact(uri)}" if is_server(uri) else f"Milvus Lite at {uri}"
    until = time.strftime("%H:%M:%S UTC", time.gmtime(holder[1]))
    return IndexBusyError(
        f"collection {collection!r} is being built by another process ({holder[0]}) on {where}: "
        f"wait for that build to finish (its lease runs to {until} and is renewed while it "
        "works), then run the same command again"
    )


def _renew(client: Any, lease: Lease, stop: threading.Event) -> None:
    """Renew ``lease`` every ``RENEW_S`` until ``stop``; flag it lost if another took it."""
    while not stop.wait(RENEW_S):
        try:
            with milvus_lock:
                held = _holder(client, lease.collection)
                if held is not None and held[0] != lease.owner:
                    lease.lost.set()
                    return
                _write(client, lease.collection, lease.owner)
        except Exception as exc:  # Milvus unreachable: the build itself will say so
            log.warning("cannot renew the build lease of %r: %s", lease.collection, exc)


@contextlib.contextmanager
def build_lease(collection: str, uri: str = "") -> Iterator[Lease]:
    """Hold the build lease of ``collection`` in its Milvus store for the ``with`` block.

    A lease held by a live builder (renewed within ``LEASE_S``, not a killed process of this
    machine) refuses the build; a server's lease is read back after ``SETTLE_S`` so that of two
    builds starting together only the last writer goes on.

    Raises:
        IndexBusyError: another process is building ``collection`` there.
    """
    where = milvus_uri(uri)
    client = milvus_client(where)
    owner = _owner()
    with milvus_lock:
        _ensure(client)
        held = _holder(client, collection)
        if held is not None and held[1] > time.time() and not _dead_here(held[0]):
            raise _busy(collection, where, held)
        _write(client, collection, owner)
    if is_server(uri):
        time.sleep(SETTLE_S)
        with milvus_lock:
            held = _holder(client, collection)
        if held is None or held[0] != owner:
            raise _busy(collection, where, held or (owner, time.time()))
    lease = Lease(collection, where, owner)
    stop = threading.Event()
    renewer = threading.Thread(target=_renew, args=(client, lease, stop), daemon=True)
    renewer.start()
    try:
        yield lease
    finally:
        stop.set()
        renewer.join()
        try:
            with milvus_lock:
                held = _holder(client, collection)
                if held is not None and held[0] == owner:
                    client.delete(collection_name=LEASES, ids=[collection])
                    client.flush(collection_name=LEASES)
        except Exception as exc:  # Milvus gone (the build says so): it expires within LEASE_S
            log.debug("cannot release the build lease of %r: %s", collection, exc)
