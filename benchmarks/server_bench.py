"""Local bench versus `bench --server` on a live `langgraph dev`, same items and concurrency.

Run: ``python -m benchmarks.server_bench`` (``make bench-server``). The method is CoT (one model
call per item) on a fake model that waits a fixed latency L without holding a thread, so the
difference between the two rows is what the server adds: HTTP, the run queue, and its
checkpointing of each run. Prints one table: items per minute for each path, the mean and
95th-percentile item latency, and the server's overhead per run (mean server item latency
minus mean local item latency). The server is stopped by its PID at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.server_bench_graph import LATENCY_ENV, MODEL, install
from factdebate.bench import arun_bench, read_results
from tests.services import stop_group

REPO = Path(__file__).resolve().parents[1]
READY_S = 180.0


def make_items(root: Path, count: int) -> Path:
    """A fever-mini-shaped dataset of ``count`` claims (the bench's input format)."""
    folder = root / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    corpus = {"doc_id": "d1", "text": "Paris is in France.", "page": "Paris"}
    (folder / "corpus.jsonl").write_text(json.dumps(corpus) + "\n")
    claims = [
        {"id": i, "claim": f"Claim {i} about Paris.", "label": "SUPPORTS", "gold_doc_ids": ["d1"]}
        for i in range(count)
    ]
    (folder / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    return root


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(folder: Path, latency: float, jobs: int) -> tuple[subprocess.Popen[bytes], str]:
    """`langgraph dev` serving the benchmark's CoT on a free loopback port, once ready.

    ``jobs`` runs at once (``--n-jobs-per-worker``): the dev server otherwise runs one.
    """
    graph = str(REPO / "benchmarks" / "server_bench_graph.py") + ":graph"
    config = {
        "dependencies": [str(REPO)],
        "graphs": {"cot": graph},
        "http": {"app": str(REPO / "factdebate" / "server" / "app.py") + ":app"},
    }
    (folder / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        LATENCY_ENV: str(latency),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
    }
    cli = Path(sys.executable).parent / "langgraph"
    log = (folder / "server.log").open("ab")
    proc = subprocess.Popen(
        [
            str(cli),
            "dev",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-browser",
            "--no-reload",
            "--n-jobs-per-worker",
            str(jobs),
            "--config",
            str(folder / "langgraph.json"),
        ],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"langgraph dev exited: see {folder / 'server.log'}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop_group(proc)
    raise RuntimeError(f"langgraph dev did not answer within {READY_S:.0f} s")


async def one_path(
    out: Path, data: Path, concurrency: int, server_url: str | None
) -> dict[str, float]:
    """Run the items on one path: the items' wall time (reports excluded), item latencies."""
    metrics = await arun_bench(
        "cot",
        "fever-mini",
        out,
        data_dir=data,
        limit=None,
        seed=0,
        concurrency=concurrency,
        context={"model": MODEL},
        server_url=server_url,
        pages=False,
    )
    wall = float(metrics["run"]["wall_s"])  # from the first item sent to the last row written
    rows = read_results(out / "results.jsonl")
    failed = [r for r in rows if r.get("stop_reason") == "failed"]
    if failed:
        raise RuntimeError(f"{len(failed)} items failed: {failed[0]['errors']}")
    latencies = sorted(float(r["latency_s"]) for r in rows)
    return {
        "items": len(rows),
        "wall_s": wall,
        "per_min": len(rows) / wall * 60,
        "mean_s": statistics.fmean(latencies),
        "p95_s": latencies[max(0, round(0.95 * len(latencies)) - 1)],
    }


def table(results: dict[str, dict[str, float]], concurrency: int, latency: float) -> str:
    """The printed comparison (Markdown)."""
    lines = [
        f"CoT, fake model latency L = {latency:.2f} s per call, concurrency {concurrency}",
        "",
        "| path | items | items wall s | items/min | mean item latency s | p95 item latency s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['items']:.0f} | {r['wall_s']:.2f} | {r['per_min']:.0f} | "
            f"{r['mean_s']:.3f} | {r['p95_s']:.3f} |"
        )
    overhead = results["bench --server"]["mean_s"] - results["local bench"]["mean_s"]
    ratio = results["bench --server"]["per_min"] / results["local bench"]["per_min"]
    lines += [
        "",
        f"server overhead per run: {overhead * 1000:.0f} ms (mean item latency, server - local); "
        f"server throughput = {ratio:.2f} x local",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse the options, run both paths and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40, help="claims per path (1..1000)")
    parser.add_argument("--concurrency", type=int, default=8, help="items in flight (1..64)")
    parser.add_argument("--latency", type=float, default=0.5, help="fake model latency L (s)")
    args = parser.parse_args(argv)
    if not 1 <= args.items <= 1000 or not 0 <= args.latency <= 10:
        parser.error("--items must be within 1..1000 and --latency within 0..10")
    install(args.latency)
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        root = Path(tmp)
        data = make_items(root / "data", args.items)
        (root / "server").mkdir()
        proc, url = start_server(root / "server", args.latency, args.concurrency)
        try:
            results: dict[str, Any] = {}
            results["local bench"] = asyncio.run(
                one_path(root / "local", data, args.concurrency, None)
            )
            results["bench --server"] = asyncio.run(
                one_path(root / "remote", data, args.concurrency, url)
            )
        finally:
            stop_group(proc)
    print(table(results, args.concurrency, args.latency))


if __name__ == "__main__":
    main()
