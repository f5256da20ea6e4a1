"""Server contexts: unknown or badly typed settings are refused before a run, as in the API."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.context_check import send

BAD = [
    ({"model": "scripted-server", "bogus": 1}, "unknown setting(s) for ToolMADContext: bogus"),
    ({"max_rounds": "abc"}, "setting max_rounds must be an integer, got 'abc'"),
    ({"top_k": 100000000}, "setting top_k must be within 1..100"),
    ("fast", "context must be an object of settings"),
]


@pytest.mark.parametrize(("context", "message"), BAD)
@pytest.mark.parametrize("path", ["/runs/wait", "/threads/t-1/runs/stream", "/runs"])
async def test_a_bad_context_is_refused_before_the_server_sees_it(path, context, message):
    response, downstream = await send(
        "POST", path, {"assistant_id": "tool-mad", "context": context}
    )
    assert response.status_code == 422
    assert message in response.json()["detail"]
    assert downstream.bodies == []


async def test_a_good_context_passes_through_unchanged():
    payload = {"assistant_id": "tool-mad", "input": {"claim": "x"}, "context": {"max_rounds": 2}}
    response, downstream = await send("POST", "/runs/wait", payload)
    assert response.status_code == 200
    assert json.loads(downstream.bodies[0]) == payload


async def test_batches_and_assistants_by_id_are_checked_too():
    batch = [{"assistant_id": "cot", "context": {}}, {"assistant_id": "cot", "context": {"x": 1}}]
    response, _ = await send("POST", "/runs/batch", batch)
    assert response.status_code == 422 and "x" in response.json()["detail"]
    by_id = {"assistant_id": "5f0c-uuid", "context": {"max_rounds": 2, "nonsense_key": 1}}
    response, _ = await send("POST", "/threads/t/runs", by_id)
    assert response.status_code == 422 and "nonsense_key" in response.json()["detail"]


async def test_other_requests_are_not_touched():
    response, downstream = await send("POST", "/threads/t/state", {"context": {"bogus": 1}})
    assert response.status_code == 200 and downstream.bodies


@pytest.mark.slow
async def test_langgraph_dev_refuses_unknown_and_bad_context(server: str):
    from langgraph_sdk import get_client

    client = get_client(url=server)
    for context, message in BAD[:3]:
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await client.runs.wait(
                None, "tool-mad", input={"claim": "The sky is blue."}, context=context
            )
        assert caught.value.response.status_code == 422
        assert message in caught.value.response.json()["detail"]
