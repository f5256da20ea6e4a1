"""LangGraph server: `langgraph dev` on 127.0.0.1 serves Tool-MAD to a langgraph_sdk client."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    cli = Path(sys.executable).parent / "langgraph"
    if not cli.exists() and not shutil.which("langgraph"):
        pytest.skip("langgraph-cli is not installed (pip install 'langgraph-cli[inmem]')")
    config = {
        "dependencies": [str(REPO)],
        "graphs": {"tool-mad": str(REPO / "tests" / "server_graph.py") + ":graph"},
        "http": {"app": str(REPO / "factdebate" / "server_app.py") + ":app"},  # as langgraph.json
    }
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "PYTHONPATH": str(REPO),
        "FACTDEBATE_HOME": str(tmp_path / "home"),
    }
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
            "--config",
            str(tmp_path / "langgraph.json"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited early:\n{proc.stdout.read() if proc.stdout else ''}"
                )
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        else:
            pytest.fail("langgraph dev did not become ready within 120 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
async def test_server_runs_a_claim_with_the_scripted_model(server: str):
    from langgraph_sdk import get_client

    client = get_client(url=server)
    assistants = await client.assistants.search(graph_id="tool-mad")
    assert assistants, "tool-mad is not registered"
    graph_info = await client.assistants.get_graph(assistants[0]["assistant_id"])
    node_ids = {n["id"] for n in graph_info["nodes"]}
    assert {"consensus_check", "judge", "query_debater_a", "score_debater_b"} <= node_ids
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    context_schema = schemas.get("context_schema") or {}
    assert context_schema["properties"]["faithfulness_threshold"]["description"]

    result = await client.runs.wait(
        None,
        "tool-mad",
        input={"claim": "The Eiffel Tower is located in Paris."},
        context={"model": "scripted-server"},
    )
    assert result["verdict"] == "SUPPORTS"
    assert result["stop_reason"] == "consensus"
    assert result["rounds"] == 1
    assert {t["agent"] for t in result["transcript"]} == {"debater_a", "debater_b"}
    assert result["cost"]["total"]["llm_calls"] > 0


def test_langgraph_json_registers_every_method():
    """Studio and `langgraph dev` see each registered method under its own name."""
    from graphs.registry import METHODS

    config = json.loads((REPO / "langgraph.json").read_text())
    assert set(config["graphs"]) == set(METHODS)
    for name, target in config["graphs"].items():
        path, _, attr = target.partition(":")
        spec = METHODS[name]
        assert path == "./" + spec.module.replace(".", "/") + ".py", name
        assert attr == spec.attr, name
