"""One collection is built by one process at a time: a lease kept in the Milvus store itself."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from factdebate.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def quick_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A constant 384-dim encoder in place of MiniLM: these tests are about who builds."""
    import factdebate.tools.retrieval.index as index
    from factdebate.tools.retrieval.embeddings import EncoderSpec, requested_encoder

    embed = lambda texts: [[1.0 + len(t) % 3] + [1.0] * 383 for t in texts]  # noqa: E731
    encoder = SimpleNamespace(
        spec=EncoderSpec(requested_encoder()), embeddings=SimpleNamespace(embed_documents=embed)
    )
    monkeypatch.setattr(index, "load_encoder", lambda name="": encoder)


def corpus(folder: Path, n: int) -> Path:
    path = folder / "c.jsonl"
    path.write_text(
        "".join(json.dumps({"id": str(i), "text": f"Fact number {i}."}) + "\n" for i in range(n))
    )
    return path


def hold(collection: str, owner: str, expires_in: float) -> None:
    """Write a lease row as another builder would (``owner`` is ``host:pid:token``)."""
    from factdebate.tools.retrieval import lease
    from factdebate.tools.retrieval.milvus import milvus_client, milvus_uri

    client = milvus_client(milvus_uri(""))
    lease._ensure(client)
    expires = int((time.time() + expires_in) * 1000)
    row = {"name": collection, "owner": owner, "expires": expires, "vector": [0.0, 0.0]}
    client.upsert(collection_name=lease.LEASES, data=[row])
    client.flush(collection_name=lease.LEASES)


def holder(collection: str) -> tuple[str, float] | None:
    from factdebate.tools.retrieval import lease
    from factdebate.tools.retrieval.milvus import milvus_client, milvus_uri

    return lease._holder(milvus_client(milvus_uri("")), collection)


def test_a_build_is_refused_while_another_process_holds_the_lease(
    tmp_path: Path, data_home: Path
) -> None:
    """A live lease of another machine: one line naming the holder, exit 2, nothing built."""
    hold("shared", "other-host:4242:beef", expires_in=300)
    result = runner.invoke(app, ["index", str(corpus(tmp_path, 20)), "--collection", "shared"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert "collection 'shared' is being built by another process (other-host:4242:beef)" in (
        result.output.replace("\n", "")
    )
    assert not (data_home / "manifests" / "shared.json").exists()
    assert not list((data_home / "bm25").glob("shared__*"))
    still = holder("shared")
    assert still is not None and still[0] == "other-host:4242:beef"  # the holder's lease stays


def test_a_killed_builders_lease_and_an_expired_one_do_not_block(
    tmp_path: Path, data_home: Path
) -> None:
    """A lease of a dead process of this machine, or one not renewed in time, is taken over."""
    import socket

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    path = corpus(tmp_path, 20)
    hold("dead", f"{socket.gethostname()}:{gone.pid}:cafe", expires_in=300)
    result = runner.invoke(app, ["index", str(path), "--collection", "dead"])
    assert result.exit_code == 0 and "indexed 20 documents" in result.output, result.output
    hold("stale", "other-host:4242:beef", expires_in=-1)
    result = runner.invoke(app, ["index", str(path), "--collection", "stale"])
    assert result.exit_code == 0 and "indexed 20 documents" in result.output, result.output
    assert holder("dead") is None and holder("stale") is None  # released when done


def test_two_builds_in_one_process_take_turns_and_store_each_row_once(
    tmp_path: Path, data_home: Path
) -> None:
    """Two threads building one collection: both finish, one after the other, no row twice."""
    from factdebate.tools.retrieval.index import index_path
    from factdebate.tools.retrieval.manifest_store import live_manifest
    from factdebate.tools.retrieval.milvus import count_rows, milvus_client, milvus_uri

    path = corpus(tmp_path, 3000)
    failures: list[BaseException] = []

    def build() -> None:
        try:
            index_path(path, "twice")
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    live = live_manifest("twice")
    assert (live.documents, live.passages, count_rows(live.milvus_name)) == (3000, 3000, 3000)
    names = milvus_client(milvus_uri("")).list_collections()
    assert [n for n in names if n.startswith("twice__")] == [live.milvus_name]


def test_a_lease_taken_over_stops_the_swap() -> None:
    """A build whose lease another builder took after it expired never swaps its manifest."""
    from factdebate.tools.retrieval.lease import IndexBusyError, Lease

    lease = Lease("c", "/tmp/x.db", "me:1:aa")
    lease.check()
    lease.lost.set()
    with pytest.raises(IndexBusyError, match="taken over by another process"):
        lease.check()
