"""LangSmith tracing on the served app only when asked for: ``LANGSMITH_TRACING=true``.

langgraph-api turns tracing on by itself whenever ``LANGSMITH_API_KEY`` is set and no
``LANGSMITH_TRACING`` says otherwise; `langgraph dev` loads the env file langgraph.json names
before it imports the server, and that file keeps the shell's ``LANGSMITH_TRACING``, else
``false``. Checked in a child process as `langgraph dev` sets it up (langgraph_api.cli).
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.bounded import run_bounded
from tests.conftest import REPO
from tests.server.test_route_table import dev_env

_SERVER_CONFIG = r"""
import json, os, sys
from dotenv.main import DotEnv

for name, value in (DotEnv(dotenv_path=sys.argv[1]).dict() or {}).items():
    os.environ[name] = value  # as langgraph_api.cli.run_server patches the environment
import langgraph_api.config as config

print(json.dumps({"tracing": bool(config.TRACING), "env": os.environ.get("LANGSMITH_TRACING")}))
"""


def _server_tracing(env_file: str, tracing: str | None) -> dict[str, object]:
    pytest.importorskip("langgraph_api", reason="langgraph-api is not installed")
    env = {
        k: v for k, v in dev_env().items() if not k.startswith(("LANGSMITH_TRAC", "LANGCHAIN_TRAC"))
    }
    env["LANGSMITH_API_KEY"] = "lsv2_pt_not-a-real-key-0000"
    if tracing is not None:
        env["LANGSMITH_TRACING"] = tracing
    done = run_bounded(
        [sys.executable, "-c", _SERVER_CONFIG, env_file],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        what="langgraph-api's tracing setting",
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_langgraph_json_names_the_env_file_that_keeps_tracing_off():
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["env"] == ".env.example"


@pytest.mark.parametrize(("tracing", "expected"), [(None, False), ("true", True), ("false", False)])
def test_a_langsmith_key_alone_sends_nothing(tracing: str | None, expected: bool):
    env_file = str(REPO / json.loads((REPO / "langgraph.json").read_text())["env"])
    assert _server_tracing(env_file, tracing)["tracing"] is expected


def test_without_the_env_file_the_key_alone_would_trace():
    """So the test above can fail: langgraph-api's own default with only a key."""
    assert _server_tracing(os.devnull, None)["tracing"] is True
