"""A served method inside a user's own graph (LangGraph's RemoteGraph), with a person's review.

The documented way (docs/review.md): the node passes the settings (``review``) as the remote
run's context, keeps the server thread in its state, and on the parent's resume sends the
decision as ``Command(resume=...)`` on that thread; input sent to the paused thread instead
is refused with one line, never paused again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanggraphDev]:
    graph = str(REPO / "tests" / "server_graph.py") + ":graph"
    dev = LanggraphDev(
        tmp_path_factory.mktemp("remote"),
        {"tool-mad": graph},
        {"FACTDEBATE_MODEL": "scripted-server"},
    )
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


class Checked(TypedDict, total=False):
    claim: str
    server_thread: str
    verdict: str | None
    review: dict[str, Any]


def user_graph(url: str) -> Any:
    """A user's graph whose one step checks its claim with the served Tool-MAD, reviewed."""
    remote = RemoteGraph("tool-mad", url=url)

    async def check(state: Checked, config: RunnableConfig) -> dict[str, Any]:
        # the step's own config (so a remote pause becomes this graph's), on the server thread
        on = {
            **config,
            "configurable": {**config["configurable"], "thread_id": state["server_thread"]},
        }
        try:
            thread = {"configurable": {"thread_id": state["server_thread"]}}
            waiting = (await remote.aget_state(thread)).next == ("human_review",)
        except httpx.HTTPStatusError:  # no such thread yet: the first visit
            waiting = False
        if waiting:  # the parent was resumed: its decision goes to the server thread
            out = await remote.ainvoke(Command(resume=interrupt("review")), on)
        else:  # pauses here (the server's review request becomes this graph's interrupt)
            out = await remote.ainvoke({"claim": state["claim"]}, on, context={"review": True})
        return {"verdict": out["verdict"], "review": out["review"]}

    builder = StateGraph(Checked)
    builder.add_node("check", check)
    builder.add_edge(START, "check")
    builder.add_edge("check", END)
    return builder.compile(checkpointer=InMemorySaver())


async def test_a_user_graph_completes_a_review_through_remote_graph(server: LanggraphDev):
    graph = user_graph(server.url)
    mine = {"configurable": {"thread_id": "user-1"}}
    server_thread = str(uuid.uuid4())
    paused = await graph.ainvoke({"claim": CLAIM, "server_thread": server_thread}, mine)
    (request,) = [i.value for i in paused["__interrupt__"]]
    assert request["kind"] == "review" and request["proposed"] == "SUPPORTS"  # review was on

    remote = RemoteGraph("tool-mad", url=server.url)
    on = {"configurable": {"thread_id": server_thread}}
    with pytest.raises(httpx.HTTPStatusError) as refused:  # input, not a decision: refused
        await remote.ainvoke({"claim": CLAIM}, on)
    assert refused.value.response.status_code == 409  # one line: what to do instead
    assert "is awaiting review: new input would end its review" in refused.value.response.text
    assert (await remote.aget_state(on)).next == ("human_review",)  # still waiting, once

    done = await graph.ainvoke(Command(resume={"verdict": "REFUTES", "note": "a replica"}), mine)
    assert done["verdict"] == "REFUTES" and done["review"]["status"] == "overruled"
    assert (await remote.aget_state(on)).next == ()
