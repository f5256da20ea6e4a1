"""`bench --server URL` against a live `langgraph dev`: same rows and evidence as local, restarts,
refusals.

One server per module (tests/langgraph_server.py) serving Tool-MAD on the scripted model of
tests/bench_server_graph.py; the local bench it is compared with uses the same model here.
"""

from __future__ import annotations

import asyncio
import json
import math
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factdebate.bench import arun_bench, read_results
from factdebate.bench.running.invokers import ServerError
from factdebate.evidence import LOG_DIR, open_snapshot
from factdebate.evidence.recording import EvidenceLog
from factdebate.tools.core.evidence_hook import EvidenceCall
from factdebate.tools.core.records import Evidence
from tests.bench.test_runner import make_data
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev

pytestmark = pytest.mark.service

GOLDS = "SRN" * 6 + "SR"  # 20 items
SETTINGS = {"model": "scripted-bench", "max_rounds": 1, "collection": "default"}


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the frozen evidence the server's operator lists is written (by a test)."""
    return tmp_path_factory.mktemp("operator") / "pool"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, listed: Path) -> Iterator[LanggraphDev]:
    graph = str(REPO / "tests" / "bench_server_graph.py") + ":graph"
    env = {"FACTDEBATE_SERVED_EVIDENCE": str(listed)}
    dev = LanggraphDev(tmp_path_factory.mktemp("langgraph-dev"), {"tool-mad": graph}, env=env)
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


@pytest.fixture
def scripted_here() -> Iterator[None]:
    """The server's scripted model and fixed documents, in this process too."""
    from tests import bench_server_graph

    bench_server_graph.install()
    yield
    bench_server_graph.uninstall()


def same(a: Any, b: Any) -> bool:
    """Equal, floats within 1e-6: two processes embed the same text a few 1e-8 apart (rounding
    both to 6 places would still split a value lying on a rounding boundary)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def rows_of(out: Path) -> list[dict[str, Any]]:
    rows = read_results(out / "results.jsonl")
    kept = ({k: v for k, v in r.items() if k not in ("latency_s", "attempt")} for r in rows)
    return sorted(kept, key=str)  # an item's try id is new in every run


def finished_lines(out: Path) -> int:
    path = out / "results.jsonl"
    return path.read_text().count("\n") if path.exists() else 0


def bench_args(data: Path, **settings: Any) -> dict[str, Any]:
    return {
        "data_dir": data,
        "limit": None,
        "seed": 0,
        "concurrency": 8,
        "context": {**SETTINGS, **settings},
        "pages": False,
    }


async def test_server_rows_equal_local_rows(
    server: LanggraphDev, scripted_here: None, tmp_path: Path
) -> None:
    data = make_data(tmp_path / "data", GOLDS)
    args = bench_args(data)
    local = await arun_bench("tool-mad", "fever-mini", tmp_path / "local", **args)
    remote = await arun_bench(
        "tool-mad", "fever-mini", tmp_path / "remote", server_url=server.url, **args
    )
    local_rows, remote_rows = rows_of(tmp_path / "local"), rows_of(tmp_path / "remote")
    assert len(local_rows) == 20
    assert all(r["stop_reason"] != "failed" and r["prediction"] for r in remote_rows)
    assert same(remote_rows, local_rows), (remote_rows, local_rows)
    assert remote["accuracy"] == local["accuracy"]
    # the server's calls, read back from each result, log what the local calls logged
    served, here = open_snapshot(tmp_path / "remote"), open_snapshot(tmp_path / "local")

    def calls(snapshot: Any) -> list[tuple[str, ...]]:
        return sorted((c.item, c.agent, c.tool, c.query, *c.docs) for c in snapshot.calls)

    assert len(served.calls) >= 20 and calls(served) == calls(here)
    assert {c.origin for c in served.calls} == {"server"}
    assert {c.k for c in served.calls} == {3}  # the run's top_k, a default the client never sent


async def test_server_restarted_mid_run_then_same_command_runs_every_item_once(
    server: LanggraphDev, tmp_path: Path
) -> None:
    data = make_data(tmp_path / "data", GOLDS)
    out = tmp_path / "run"
    args = bench_args(data, model="scripted-bench-slow")
    run = asyncio.create_task(
        arun_bench("tool-mad", "fever-mini", out, server_url=server.url, **args)
    )
    for _ in range(3000):  # (read_results would rewrite the file under the running bench)
        if finished_lines(out) >= 3:
            break
        assert not run.done(), run.result()
        await asyncio.sleep(0.1)
    await asyncio.to_thread(server.stop, signal.SIGKILL)  # a crash, runs in flight
    with pytest.raises(ServerError, match="cannot be reached.*run the same command again"):
        await run
    before = len(read_results(out / "results.jsonl"))
    assert 3 <= before < 20

    await asyncio.to_thread(server.start)
    metrics = await arun_bench("tool-mad", "fever-mini", out, server_url=server.url, **args)
    lines = (out / "results.jsonl").read_text().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert sorted(ids) == sorted(str(i) for i in range(20))  # every item, once
    assert all(json.loads(line)["stop_reason"] != "failed" for line in lines)
    assert metrics["run"]["resumed_items"] == before


async def test_server_refusing_a_setting_stops_the_bench_before_any_item(
    server: LanggraphDev, tmp_path: Path
) -> None:
    data = make_data(tmp_path / "data", GOLDS)
    out = tmp_path / "run"
    with pytest.raises(ServerError, match="answered 422: .*max_rounds"):
        await arun_bench(
            "tool-mad", "fever-mini", out, server_url=server.url, **bench_args(data, max_rounds=0)
        )
    assert not (out / "results.jsonl").exists()


def write_pool(folder: Path, claims: dict[str, str]) -> None:
    """Frozen evidence holding one document per claim that no live tool of the server returns."""
    log = EvidenceLog(folder / LOG_DIR, {"datasets": ["fever-mini"]})
    for item, claim in claims.items():
        call = EvidenceCall("rag", "custom", claim, 3, "default", item, claim, "debater_a")
        doc = Evidence(id=f"frozen-{item}", title="", text=claim, source="fake", score=1.0)
        log.add(call, [doc], "", "live")
    log.close()


async def test_a_server_run_reads_the_frozen_evidence_its_operator_lists(
    server: LanggraphDev, listed: Path, tmp_path: Path
) -> None:
    data = make_data(tmp_path / "data", "SR")
    write_pool(listed, {str(i): f"Claim number {i} about Paris." for i in range(2)})
    pooled = {"evidence_from": str(listed), "evidence_scope": "claim"}
    out = tmp_path / "run"
    await arun_bench(
        "tool-mad", "fever-mini", out, server_url=server.url, **bench_args(data, **pooled)
    )
    rows = read_results(out / "results.jsonl")
    read = [
        (row["id"], doc["id"])
        for row in rows
        for turn in row["result"]["transcript"]
        if turn["tool"] in ("rag", "search")
        for doc in turn["evidence"]
    ]
    assert len(rows) == 2 and read  # every document each debater read: its claim's pool
    assert all(doc == f"frozen-{item}" for item, doc in read), read
    run = json.loads((out / "run.json").read_text())
    assert run["evidence"] == {
        "from": str(listed),
        "scope": "claim",
        "miss": "stop",
        "on": "server",
    }
    assert "opened on the server" in (out / "report.md").read_text()

    other = tmp_path / "other"  # a snapshot the operator did not list: refused before any item
    write_pool(other, {"0": "Claim number 0 about Paris."})
    with pytest.raises(ServerError, match="FACTDEBATE_SERVED_EVIDENCE"):
        await arun_bench(
            "tool-mad", "fever-mini", tmp_path / "refused", server_url=server.url,
            **bench_args(data, evidence_from=str(other)),
        )  # fmt: skip
    assert not (tmp_path / "refused" / "results.jsonl").exists()
