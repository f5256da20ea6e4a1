"""The open self-hosted server (stock langgraph-api + MIT langgraph-runtime-pg) on PostgreSQL.

It pins an older langgraph-api than this project's dev server, so it lives in a venv of its
own (docs/deployment.md says how); give that venv's python in $FACTDEBATE_LANGGRAPH_PG_PYTHON.
Without it, or without redis-server, the test skips and says why. It checks what a team
relies on: a thread's result survives a server restart, kept in PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.bounded import COMMAND_GUARD_S, SERVICE_START_S
from tests.conftest import REPO
from tests.pg_server import PgServer, free_port, postgres_or_skip
from tests.services import stop_group

PYTHON_ENV = "FACTDEBATE_LANGGRAPH_PG_PYTHON"
PYTHON = os.environ.get(PYTHON_ENV, "")
pytestmark = [
    pytest.mark.service,
    pytest.mark.skipif(
        not PYTHON or not Path(PYTHON).exists(),
        reason=f"${PYTHON_ENV} names no python with langgraph-runtime-pg (docs/deployment.md)",
    ),
]
SERVER = """
import sys
from langgraph_api.cli import run_server
port, redis, database, graph = sys.argv[1:5]
run_server(host="127.0.0.1", port=int(port), graphs={"cot": graph}, n_jobs_per_worker=2,
           runtime_edition="pg", __redis_uri__=redis, __database_uri__=database,
           __migrations_path__=None)
"""


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    yield from postgres_or_skip()


def start(python: str, args: list[str], folder: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FACTDEBATE_BENCH_LATENCY_S": "0"}
    log = (folder / "server.log").open("ab")
    proc = subprocess.Popen(
        [python, "-c", SERVER, *args],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    url = f"http://127.0.0.1:{args[0]}"
    deadline = time.monotonic() + SERVICE_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited: {(folder / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.5)
    stop_group(proc, 30)
    pytest.fail("the self-hosted server did not answer within 180 s")


def test_thread_survives_a_restart_of_the_open_postgres_server(pg: PgServer, tmp_path: Path):
    python = PYTHON
    redis_bin = shutil.which("redis-server")
    if redis_bin is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    database = pg.create_database("agent")
    redis_port = free_port()
    redis = subprocess.Popen(
        [redis_bin, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port = free_port()
    graph = str(REPO / "benchmarks" / "server_bench_graph.py") + ":graph"
    args = [str(port), f"redis://127.0.0.1:{redis_port}", database, graph]
    url = f"http://127.0.0.1:{port}"
    server = None
    try:
        server = start(python, args, tmp_path)
        thread = httpx.post(f"{url}/threads", json={}, timeout=COMMAND_GUARD_S).json()["thread_id"]
        run = httpx.post(
            f"{url}/threads/{thread}/runs/wait",
            json={
                "assistant_id": "cot",
                "input": {"claim": "The Eiffel Tower is in Paris."},
                "context": {"model": "fixed-latency"},
            },
            timeout=COMMAND_GUARD_S,
        )
        assert run.status_code == 200 and run.json()["verdict"] == "SUPPORTS"
        stop_group(server, 30)
        server = start(python, args, tmp_path)
        state = httpx.get(f"{url}/threads/{thread}/state", timeout=COMMAND_GUARD_S).json()
        assert state["values"]["verdict"] == "SUPPORTS"
        import psycopg

        with psycopg.connect(database) as conn:
            row = conn.execute(
                "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)
            ).fetchone()
        assert row is not None and row[0] >= 1
    finally:
        if server is not None:
            stop_group(server, 30)
        redis.terminate()
        redis.wait(timeout=10)
