"""Keys and roles of a served app, in process: the key file, and what each role's handler allows.

The handlers are ``factdebate.server.auth``'s, picked as langgraph-api picks them (most
specific first; its own dispatch, ``langgraph_api.auth.custom``, runs in a child process
here, as importing it reads the server's environment); tests/server/test_auth_live.py runs
a server.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import Auth

from factdebate.server import auth as served_auth
from factdebate.server.keys import (
    KeyFileError,
    KeyStore,
    key_digest,
    main,
    read_key_file,
    revoke,
)
from factdebate.server.keys import issue as issue_key
from tests.bounded import run_bounded
from tests.conftest import REPO
from tests.server.test_route_table import dev_env


def test_a_key_is_shown_once_and_only_its_digest_is_stored(tmp_path: Path):
    path = tmp_path / "keys.json"
    key = issue_key(path, "alice", "client")
    text = path.read_text()
    assert key.startswith("fdk_") and len(key) > 40
    assert key not in text and key_digest(key) in text
    assert os.stat(path).st_mode & 0o077 == 0  # the operator's alone
    store = KeyStore(path)
    assert store.principal(key).identity == "alice"  # type: ignore[union-attr]
    assert store.principal(key + "x") is None


def test_issuing_again_rotates_and_revoking_removes_at_once(tmp_path: Path):
    path = tmp_path / "keys.json"
    store = KeyStore(path)
    old = issue_key(path, "rita", "reviewer")
    assert store.principal(old).role == "reviewer"  # type: ignore[union-attr]
    new = issue_key(path, "rita", "reviewer")
    assert store.principal(old) is None and store.principal(new) is not None
    assert revoke(path, "rita") and not revoke(path, "rita")
    assert store.principal(new) is None
    assert [p.identity for p in read_key_file(path).principals] == []


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("not json", "Invalid JSON"),
        (
            '{"principals": [{"identity": "a", "role": "admin", "key_sha256": "'
            + "0" * 64
            + '"}]}',
            "principals.0.role",
        ),
        (
            '{"principals": [{"identity": "a", "role": "client", "key_sha256": "k"}]}',
            "principals.0.key_sha256",
        ),
        ('{"principals": [], "extra": 1}', "extra"),
        (
            '{"principals": [{"identity": "a", "role": "client", "key_sha256": "'
            + "0" * 64
            + '"}, {"identity": "a", "role": "client", "key_sha256": "'
            + "1" * 64
            + '"}]}',
            "listed twice",
        ),
    ],
)
def test_a_bad_key_file_is_one_line(tmp_path: Path, text: str, words: str):
    path = tmp_path / "keys.json"
    path.write_text(text)
    with pytest.raises(KeyFileError) as caught:
        read_key_file(path)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_the_key_command_issues_lists_and_refuses_bad_roles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = str(tmp_path / "keys.json")
    assert main(["issue", path, "ops", "operator"]) == 0
    key = capsys.readouterr().out.strip()
    assert main(["list", path]) == 0 and capsys.readouterr().out == "ops\toperator\n"
    assert main(["issue", path, "eve", "root"]) == 2
    assert "role" in capsys.readouterr().err
    assert KeyStore(Path(path)).principal(key) is not None


class _User:
    def __init__(self, identity: str) -> None:
        self.identity = identity


def _handler(resource: str, action: str) -> Any:
    """The handler the server runs for ``resource.action`` (its order: most specific first)."""
    handlers = served_auth.auth._handlers
    for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
        if key in handlers:
            return handlers[key][-1]
    return served_auth.auth._global_handlers[-1]


async def _ask(roles: list[str], resource: str, action: str, value: Any) -> Any:
    """What our handler answers: a filter, None (allowed), or (status, detail) refused."""
    ctx = Auth.types.AuthContext(
        user=_User("alice"),  # type: ignore[arg-type]
        permissions=roles,
        resource=resource,  # type: ignore[arg-type]
        action=action,  # type: ignore[arg-type]
    )
    try:
        return await _handler(resource, action)(ctx=ctx, value=value)
    except Auth.exceptions.HTTPException as exc:
        return exc.status_code, exc.detail


@pytest.fixture(autouse=True)
def thread_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any, dict[str, bool]]]:
    """The review checks the handler asks the server for (no server here: recorded)."""
    asked: list[tuple[Any, Any, dict[str, bool]]] = []

    async def record(thread_id: Any, owner: Any, **marks: bool) -> None:
        asked.append((thread_id, owner, marks))

    monkeypatch.setattr(served_auth, "refuse_review_rewrite", record)
    return asked


async def test_runs_that_could_end_a_review_ask_the_server_about_the_thread(
    thread_reads: list[tuple[Any, Any, dict[str, bool]]],
):
    """Checked where runs are created, so the WebSocket cannot end a review either."""
    await _ask(["client"], "threads", "create_run", _run(input={"claim": "c"}))
    rewind = {"checkpoint_id": "1"}
    await _ask(["operator"], "threads", "create_run", _run(config={"configurable": rewind}))
    await _ask(["reviewer"], "threads", "create_run", _run(command={"resume": 1}))
    assert thread_reads == [
        ("t", "alice", {"steers": False, "rewinds": False, "new_input": True}),
        ("t", None, {"steers": False, "rewinds": True, "new_input": False}),
    ]


def _run(**kwargs: Any) -> dict[str, Any]:
    return {"thread_id": "t", "metadata": {}, "kwargs": kwargs}


@pytest.mark.parametrize(
    ("roles", "kwargs", "allowed"),
    [
        (["reviewer"], {"command": {"resume": {"approve": True}}}, True),
        (
            ["reviewer"],
            {"command": {"resume": {"approve": True}, "update": {"verdict": "X"}}},
            False,
        ),
        (["reviewer"], {"input": {"claim": "c"}}, False),
        (
            ["reviewer"],
            {"command": {"resume": 1}, "config": {"configurable": {"checkpoint_id": "1"}}},
            False,
        ),
        (["client"], {"command": {"resume": {"approve": True}}}, False),
        (["client"], {"command": {"update": {"verdict": "REFUTES"}}}, False),
        (["client"], {"command": {"goto": "judge"}}, False),
        (
            ["client"],
            {"input": {"claim": "c"}, "config": {"configurable": {"checkpoint_id": "1"}}},
            False,
        ),
        (["client"], {"input": {"claim": "c"}}, True),
        (["operator"], {"command": {"resume": {"approve": True}}}, False),
        (["operator"], {"input": {"claim": "c"}}, True),
        ([], {"input": {"claim": "c"}}, False),
    ],
)
async def test_only_a_reviewer_decides_and_only_by_a_plain_decision(
    roles: list[str], kwargs: dict[str, Any], allowed: bool
):
    answer = await _ask(roles, "threads", "create_run", _run(**kwargs))
    if allowed:
        assert answer is None or answer == {"owner": "alice"}, answer
    else:
        assert isinstance(answer, tuple) and answer[0] == 403, answer
        assert "may not" in answer[1] and "\n" not in answer[1]


async def test_a_client_owns_what_it_creates_and_reads_only_its_own():
    value = {"thread_id": "t", "metadata": {"owner": "mallory", "bench_run": "r"}}
    assert await _ask(["client"], "threads", "create", value) == {"owner": "alice"}
    assert value["metadata"] == {"owner": "alice", "bench_run": "r"}  # never another's
    run = _run(input={"claim": "c"})
    run["metadata"] = {"owner": "mallory"}
    assert await _ask(["client"], "threads", "create_run", run) == {"owner": "alice"}
    assert run["metadata"]["owner"] == "alice"  # a thread the run creates is the caller's
    for action in ("read", "search"):
        assert await _ask(["client"], "threads", action, {}) == {"owner": "alice"}
        assert await _ask(["reviewer"], "threads", action, {}) is None
        assert await _ask(["operator"], "threads", action, {}) is None
    patch = {"thread_id": "t", "metadata": {"owner": "mallory"}}
    assert await _ask(["client"], "threads", "update", patch) == {"owner": "alice"}
    assert patch["metadata"]["owner"] == "alice"


@pytest.mark.parametrize(
    ("resource", "action"),
    [
        ("threads", "delete"),
        ("threads", "create"),
        ("threads", "update"),
        ("assistants", "create"),
        ("assistants", "update"),
        ("assistants", "delete"),
        ("crons", "create"),
        ("crons", "search"),
        ("store", "put"),
        ("store", "get"),
        ("store", "search"),
    ],
)
async def test_what_a_reviewer_may_not_do(resource: str, action: str):
    answer = await _ask(["reviewer"], resource, action, {"metadata": {}})
    assert isinstance(answer, tuple) and answer[0] == 403, answer


@pytest.mark.parametrize(
    ("resource", "action"),
    [
        ("threads", "delete"),
        ("assistants", "update"),
        ("assistants", "delete"),
        ("crons", "create"),
        ("crons", "read"),
        ("crons", "delete"),
        ("store", "put"),
        ("store", "delete"),
        ("store", "list_namespaces"),
    ],
)
async def test_managing_is_the_operators(resource: str, action: str):
    answer = await _ask(["client"], resource, action, {"metadata": {}})
    assert isinstance(answer, tuple) and answer[0] == 403, answer
    assert await _ask(["operator"], resource, action, {"metadata": {}}) is None


async def test_a_client_creates_assistants_of_its_own():
    value = {"graph_id": "tool-mad", "metadata": {"owner": "mallory"}}
    assert await _ask(["client"], "assistants", "create", value) == {"owner": "alice"}
    assert value["metadata"] == {"owner": "alice"}


async def test_everyone_with_a_role_reads_the_assistants():
    for roles in (["client"], ["reviewer"], ["operator"]):
        for action in ("read", "search"):
            assert await _ask(roles, "assistants", action, {}) is None


_DISPATCH = r"""
import asyncio, json
from langgraph_sdk import Auth
from starlette.exceptions import HTTPException
import langgraph_api.auth.custom as custom
from factdebate.server.auth import auth

custom.get_auth_instance = lambda: auth
known = custom._derive_known_resource_actions(auth)

async def ask(roles, resource, action, value):
    user = custom.normalize_user({"identity": "alice", "permissions": roles})
    ctx = Auth.types.AuthContext(user=user, permissions=roles, resource=resource, action=action)
    try:
        return await custom.handle_event(ctx, value)
    except HTTPException as exc:
        return exc.status_code

async def main():
    resume = {"thread_id": "t", "metadata": {}, "kwargs": {"command": {"resume": 1}}}
    return {
        "missing": custom._missing_handler_paths(auth),
        "resources": sorted(known),
        "client_decides": await ask(["client"], "threads", "create_run", resume),
        "reviewer_decides": await ask(["reviewer"], "threads", "create_run", resume),
        "client_reads": await ask(["client"], "threads", "read", {"thread_id": "t"}),
        "client_store": await ask(["client"], "store", "put", {"namespace": ["x"], "key": "k"}),
    }

print(json.dumps(asyncio.run(main())))
"""


def test_every_action_the_server_dispatches_has_a_handler():
    """In langgraph-api's own dispatch: no resource action falls through to allow-all."""
    pytest.importorskip("langgraph_api", reason="langgraph-api is not installed")
    done = run_bounded(
        [sys.executable, "-c", _DISPATCH],
        env=dev_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        what="langgraph-api's auth dispatch",
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["missing"] == []
    assert {"threads", "assistants", "crons", "store"} <= set(got["resources"])
    assert got["client_decides"] == 403 and got["reviewer_decides"] is None
    assert got["client_reads"] == {"owner": "alice"} and got["client_store"] == 403


def test_langgraph_json_registers_the_auth_without_studios_bypass():
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["auth"]["path"] == "factdebate.server.auth:auth"
    assert config["auth"]["disable_studio_auth"] is True  # Studio presents a key like anyone


def test_a_request_without_a_known_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "keys.json"
    key = issue_key(path, "alice", "client")
    monkeypatch.setattr(served_auth, "STORE", KeyStore(path))
    assert served_auth.caller({b"authorization": f"Bearer {key}".encode()}, "127.0.0.1") == (
        "alice",
        ["client"],
    )
    assert served_auth.caller({b"x-api-key": key.encode()}, "10.0.0.5")[0] == "alice"
    for headers in ({}, {b"authorization": b"Bearer nope"}, {b"x-api-key": b"fdk_x"}):
        with pytest.raises(Auth.exceptions.HTTPException) as caught:
            served_auth.caller(headers, "127.0.0.1")
        assert caught.value.status_code == 401
    path.write_text("{broken")  # an unreadable key file lets nobody in
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        served_auth.caller({b"x-api-key": key.encode()}, "127.0.0.1")
    assert caught.value.status_code == 401


def test_mcp_calls_need_a_key_of_a_role_that_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "keys.json"
    client, reviewer = issue_key(path, "alice", "client"), issue_key(path, "rita", "reviewer")
    monkeypatch.setattr(served_auth, "STORE", KeyStore(path))

    def scope(key: str | None) -> dict[str, Any]:
        headers = [(b"Authorization", f"Bearer {key}".encode())] if key else []
        return {"headers": headers, "server": ("127.0.0.1", 2024)}

    assert served_auth.run_refusal(scope(client)) is None
    assert served_auth.run_refusal(scope(None)) == (
        401,
        "a key is required: Authorization: Bearer KEY",
    )
    status, line = served_auth.run_refusal(scope(reviewer)) or (0, "")
    assert status == 403 and "rita (reviewer) may not start runs" in line


def test_an_open_server_is_loopback_only_unless_the_operator_says_so(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(served_auth, "STORE", None)
    monkeypatch.delenv("FACTDEBATE_SERVER_KEYS", raising=False)
    monkeypatch.delenv("FACTDEBATE_SERVER_OPEN", raising=False)
    assert served_auth.caller({}, "127.0.0.1") == ("local", served_auth.OPEN_ROLES)
    assert served_auth.caller({}, "::1")[0] == "local"
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        served_auth.caller({}, "192.168.1.20")
    assert caught.value.status_code == 403
    monkeypatch.setenv("LANGGRAPH_API_URL", "http://0.0.0.0:2024")
    with pytest.raises(served_auth.OpenServerError, match="FACTDEBATE_SERVER_OPEN=true"):
        served_auth._startup()
    monkeypatch.setenv("LANGGRAPH_API_URL", "http://127.0.0.1:2024")
    assert served_auth._startup() is None
    monkeypatch.setenv("LANGGRAPH_API_URL", "http://0.0.0.0:2024")
    monkeypatch.setenv("FACTDEBATE_SERVER_OPEN", "true")
    assert served_auth._startup() is None
    assert served_auth.caller({}, "192.168.1.20")[0] == "local"


def test_a_named_key_file_that_cannot_be_read_stops_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FACTDEBATE_SERVER_KEYS", str(tmp_path / "missing.json"))
    with pytest.raises(KeyFileError, match="missing.json"):
        served_auth._startup()
