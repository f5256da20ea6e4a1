"""Server contexts: unknown or badly typed settings are refused before a run, as in the API."""

from __future__ import annotations

import json

import httpx
import pytest

from factdebate.server.app import MAX_JSON_DEPTH
from factdebate.server.bodies import MAX_BODY_BYTES
from tests.context_check import Downstream, send, send_raw

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


ASSISTANT = "0f6c3b2e-8d4a-4c1e-9a7b-3e5d2c1b0a99"


@pytest.mark.parametrize(
    "path", ["/runs/wait", "/threads/t/runs", "/threads/t/state", "/store/items/search"]
)
async def test_a_deeply_nested_body_is_a_422_on_any_route(path: str):
    deep = b'{"assistant_id": "cot", "input": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    response, downstream = await send_raw("POST", path, deep)
    assert response.status_code == 422
    assert response.json()["detail"] == f"request body nests deeper than {MAX_JSON_DEPTH} levels"
    assert downstream.bodies == []


async def test_brackets_inside_strings_do_not_count_and_bad_json_is_left_to_the_server():
    text = json.dumps({"assistant_id": "cot", "input": {"claim": "[{" * 5000 + '\\"]'}})
    response, downstream = await send_raw("POST", "/runs/wait", text.encode())
    assert response.status_code == 200 and downstream.bodies
    nested = json.dumps({"assistant_id": "cot", "input": {"a": [[[[{"b": [1]}]]]]}}).encode()
    response, downstream = await send_raw("POST", "/runs/wait", nested)
    assert response.status_code == 200
    response, downstream = await send_raw("POST", "/runs/wait", b'{"assistant_id": ')
    assert response.status_code == 200 and downstream.bodies == [b'{"assistant_id": ']


async def test_an_oversized_body_is_refused_before_the_server_reads_it():
    body = b'{"input": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
    response, downstream = await send_raw("POST", "/threads/t/state", body)
    assert response.status_code == 413 and downstream.bodies == []


async def test_an_assistant_named_by_id_is_checked_against_its_own_graph():
    """Looked up on the server: names and values as strictly as for a named graph."""
    tool_mad_only = {"faithfulness_threshold": 0.5}  # a Tool-MAD setting CoT does not have
    for payload in (
        {"assistant_id": ASSISTANT, "context": tool_mad_only},
        {"assistant_id": ASSISTANT, "config": {"configurable": {"max_rounds": "abc"}}},
    ):
        response, downstream = await send(
            "POST", "/runs/wait", payload, Downstream(assistants={ASSISTANT: "cot"})
        )
        assert response.status_code == 422, response.text
        assert downstream.looked_up == [f"/assistants/{ASSISTANT}"] and downstream.bodies == []
    response, _ = await send(
        "POST",
        "/runs/wait",
        {"assistant_id": ASSISTANT, "context": tool_mad_only},
        Downstream(assistants={ASSISTANT: "tool-mad"}),
    )
    assert response.status_code == 200
    for method, path, payload in (
        ("PATCH", f"/assistants/{ASSISTANT}", {"context": tool_mad_only}),
        ("POST", f"/a2a/{ASSISTANT}", {"params": {"context": tool_mad_only}}),
        ("PATCH", "/runs/crons/c-1", {"context": tool_mad_only}),
    ):
        downstream = Downstream(assistants={ASSISTANT: "cot"}, crons={"c-1": ASSISTANT})
        response, _ = await send(method, path, payload, downstream)
        assert response.status_code == 422, (path, response.text)
        assert "faithfulness_threshold" in response.json()["detail"]


async def test_an_assistant_that_cannot_be_looked_up_still_gets_its_values_checked():
    payload = {"assistant_id": ASSISTANT, "context": {"max_rounds": "abc"}}
    response, downstream = await send("POST", "/threads/t/runs", payload)
    assert response.status_code == 422 and "max_rounds" in response.json()["detail"]
    assert downstream.looked_up == [f"/assistants/{ASSISTANT}"]


async def test_commands_that_start_runs_are_checked_and_other_commands_pass():
    start = {
        "id": 1,
        "method": "run.start",
        "params": {"assistant_id": "cot", "config": {"configurable": {"max_rounds": "abc"}}},
    }
    response, downstream = await send("POST", "/threads/t/commands", start)
    assert response.status_code == 422 and "max_rounds" in response.json()["detail"]
    respond = {
        "id": 2,
        "method": "input.respond",
        "params": {"interrupt_id": "i-1", "response": {}, "config": {"configurable": {"top_k": 0}}},
    }
    response, downstream = await send("POST", "/threads/t/commands", respond)
    assert response.status_code == 422 and "top_k" in response.json()["detail"]
    subscribe = {"id": 3, "method": "subscription.subscribe", "params": {"channels": ["values"]}}
    response, downstream = await send("POST", "/threads/t/commands", subscribe)
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
        # runs.wait's error prints as httpx's own line; the SDK adds the body as a note
        assert any(message in note for note in getattr(caught.value, "__notes__", []))
