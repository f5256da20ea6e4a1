"""An open `langgraph dev` (langgraph.json's auth, no key file): today's single user on loopback.

The one user (``local``) runs, reads and decides as before, the decision names ``local``, and
a review still ends only by a decision.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.bounded import COMMAND_GUARD_S
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("open-dev")
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(folder, {"tool-mad": graph}, env={"FACTDEBATE_SERVER_KEYS": ""})
    config = json.loads((folder / "langgraph.json").read_text())
    config["auth"] = json.loads((REPO / "langgraph.json").read_text())["auth"]
    (folder / "langgraph.json").write_text(json.dumps(config))
    dev.start()
    try:
        log = (folder / "server.log").read_text(errors="replace")
        assert "an open single-user server" in log  # said at start
        yield dev.url
    finally:
        dev.stop()


def test_the_one_user_runs_and_decides_and_the_record_names_local(open_server: str):
    client = httpx.Client(base_url=open_server, timeout=COMMAND_GUARD_S)
    thread = client.post("/threads", json={}).json()["thread_id"]
    run = f"/threads/{thread}/runs/wait"
    claim = {"assistant_id": "tool-mad", "input": {"claim": CLAIM}}
    paused = client.post(
        run, json={**claim, "context": {"model": "scripted-server", "review": True}}
    )
    assert paused.json().get("__interrupt__"), paused.text[:300]
    ended = client.post(run, json=claim)  # new input would end the review: refused
    assert ended.status_code == 409 and "new input" in ended.text
    approve = {"decisions": [{"type": "approve"}]}
    done = client.post(run, json={"assistant_id": "tool-mad", "command": {"resume": approve}})
    assert done.status_code == 200, done.text
    assert done.json()["review"]["by"] == "local"
    assert client.post("/threads/search", json={}).status_code == 200
    assert client.post("/internal/truncate", json={}).status_code == 403
