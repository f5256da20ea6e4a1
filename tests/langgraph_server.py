"""A live `langgraph dev` on 127.0.0.1 for tests: started on a free port, stopped by its PID.

The server reads a langgraph.json written into a temporary folder (graphs given by the test,
the project's ``http.app`` middleware as in the real langgraph.json) and can be stopped and
started again on the same port (what a restart looks like to a client).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.bounded import COMMAND_GUARD_S, SERVICE_START_S
from tests.conftest import REPO
from tests.services import free_port

READY_S = SERVICE_START_S
JOBS = 8  # runs the server executes at once


def langgraph_cli() -> Path:
    """The `langgraph` command of this venv, or a skip saying how to install it."""
    cli = Path(sys.executable).parent / "langgraph"
    if cli.exists():
        return cli
    found = shutil.which("langgraph")
    if not found:
        pytest.skip("langgraph-cli is not installed (pip install 'langgraph-cli[inmem]')")
    return Path(found)


class LanggraphDev:
    """`langgraph dev` serving ``graphs`` (name -> "path.py:attr") from ``folder``."""

    def __init__(
        self,
        folder: Path,
        graphs: dict[str, str],
        env: dict[str, str] | None = None,
        *,
        middleware: bool = True,
    ):
        """``middleware=False`` serves without the project's ``http.app`` (its graphs only)."""
        self.cli = langgraph_cli()
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        config: dict[str, object] = {"dependencies": [str(REPO)], "graphs": graphs}
        if middleware:
            config["http"] = {"app": str(REPO / "factdebate" / "server" / "app.py") + ":app"}
        (folder / "langgraph.json").write_text(json.dumps(config))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "PYTHONPATH": str(REPO),
            "FACTDEBATE_HOME": str(folder / "home"),
            **(env or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server (again) on its port and wait until ``/ok`` answers."""
        log = (self.folder / "server.log").open("ab")
        self.proc = subprocess.Popen(
            [
                str(self.cli),
                "dev",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--no-browser",
                "--no-reload",
                "--n-jobs-per-worker",  # the dev server runs one run at a time without it
                str(JOBS),
                "--config",
                str(self.folder / "langgraph.json"),
            ],
            cwd=self.folder,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole, by PID
        )
        log.close()
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                pytest.fail(f"langgraph dev exited early:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        pytest.fail(f"langgraph dev did not become ready within {READY_S:.0f} s")

    def log_tail(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server's process group by its PID (SIGKILL: a crash) and reap it."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


async def websocket_run_failure(url: str, thread: str, params: dict[str, object]) -> str:
    """Start a run over the protocol v2 WebSocket: the error its ``failed`` lifecycle event holds.

    Fails the test when the run completes, or reports no end within a minute.
    """
    websockets = pytest.importorskip("websockets", reason="websockets is not installed")
    address = url.replace("http://", "ws://") + f"/threads/{thread}/stream/events"
    subscribe = {"channels": ["lifecycle"]}
    async with websockets.connect(address) as ws:
        await ws.send(
            json.dumps({"id": 1, "method": "subscription.subscribe", "params": subscribe})
        )
        await ws.send(json.dumps({"id": 2, "method": "run.start", "params": params}))
        deadline = time.monotonic() + COMMAND_GUARD_S
        while time.monotonic() < deadline:
            event = json.loads(await asyncio.wait_for(ws.recv(), timeout=COMMAND_GUARD_S))
            data = (event.get("params") or {}).get("data") or {}
            if event.get("method") == "lifecycle" and data.get("event") == "failed":
                return str(data.get("error"))
            assert data.get("event") != "completed", event
    pytest.fail("the WebSocket run reported no end")
