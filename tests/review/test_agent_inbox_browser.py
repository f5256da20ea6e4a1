"""The Agent Inbox, built from its repository, shows and decides a paused factdebate thread.

Headless Chromium drives the inbox's production build (``next start``) over the DevTools
protocol against a live `langgraph dev`. The build is not part of this repository: point
``FACTDEBATE_AGENT_INBOX`` at a checkout of langchain-ai/agent-inbox built with ``next build``
(docs/review-ui.md says how, offline); without it, Node or Chromium the test skips.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.bounded import COMMAND_GUARD_S, SERVICE_START_S
from tests.chromium import FLAGS, SHOTS_ENV
from tests.conftest import REPO
from tests.langgraph_server import LanggraphDev
from tests.server_graph import CLAIM
from tests.services import free_port, stop_group

pytestmark = pytest.mark.service

INBOX_ENV = "FACTDEBATE_AGENT_INBOX"
READY_S = SERVICE_START_S


def inbox_build() -> Path:
    """The built Agent Inbox checkout, or a skip that says what is missing."""
    if shutil.which("node") is None or shutil.which("npx") is None:
        pytest.skip("Node.js is not installed (the Agent Inbox is a Next.js app)")
    if shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (apt install chromium)")
    folder = os.environ.get(INBOX_ENV)
    if not folder or not (Path(folder) / ".next" / "BUILD_ID").is_file():
        pytest.skip(f"{INBOX_ENV} does not name a built agent-inbox checkout (next build)")
    return Path(folder)


def started(command: list[str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole, by PID
            env={**os.environ, "NEXT_TELEMETRY_DISABLED": "1"},
        )


def wait_http(url: str) -> Any:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        try:
            return httpx.get(url, timeout=2)
        except httpx.HTTPError:
            time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {READY_S:.0f} s")


class Page:
    """One browser tab over the DevTools protocol: calls, evaluation, visible text."""

    def __init__(self, ws: Any) -> None:
        self.ws, self.calls = ws, 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.calls += 1
        await self.ws.send(json.dumps({"id": self.calls, "method": method, "params": params}))
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), COMMAND_GUARD_S))
            if message.get("id") == self.calls:
                assert "error" not in message, message
                result: dict[str, Any] = message.get("result", {})
                return result

    async def eval(self, expression: str) -> Any:
        found = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        return found.get("result", {}).get("value")

    async def shows(self, text: str, timeout: float = COMMAND_GUARD_S) -> str:
        body = ""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = await self.eval("document.body ? document.body.innerText : ''") or ""
            if text in body:
                return str(body)
            await asyncio.sleep(1)
        pytest.fail(f"the inbox never showed {text!r}; it showed: {body[:1500]}")

    async def click(self, label: str) -> None:
        script = (
            "(() => { const b = [...document.querySelectorAll('button')]"
            f".find(b => b.innerText.trim() === {json.dumps(label)});"
            " if (!b) return false; b.click(); return true; })()"
        )
        assert await self.eval(script), f"no button {label!r}"

    async def type_response(self, text: str) -> None:
        script = (
            "(() => { const t = document.querySelector('textarea'); if (!t) return false;"
            " const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype,"
            f" 'value').set; set.call(t, {json.dumps(text)});"
            " t.dispatchEvent(new Event('input', {bubbles: true})); return true; })()"
        )
        assert await self.eval(script), "no response box"

    async def screenshot(self, name: str) -> None:
        folder = os.environ.get(SHOTS_ENV)
        if folder:
            shot = await self.call("Page.captureScreenshot", format="png")
            Path(folder, name).write_bytes(base64.b64decode(shot["data"]))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(server URL, inbox URL, the browser's DevTools page socket), each stopped after."""
    build = inbox_build()
    folder = tmp_path_factory.mktemp("inbox")
    dev = LanggraphDev(
        folder / "dev", {"tool-mad": str(REPO / "tests" / "server_graph.py") + ":graph"}
    )
    dev.start()
    port, debug = free_port(), free_port()
    app = started(
        ["npx", "next", "start", "-p", str(port), "-H", "127.0.0.1"], build, folder / "next.log"
    )
    browser = started(
        [
            shutil.which("chromium") or "chromium",
            *FLAGS,
            f"--remote-debugging-port={debug}",
            f"--user-data-dir={folder / 'profile'}",
            "--window-size=1400,1000",
            "about:blank",
        ],
        folder,
        folder / "chromium.log",
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/")
        targets = wait_http(f"http://127.0.0.1:{debug}/json").json()
        socket = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        yield dev.url, f"http://127.0.0.1:{port}", socket
    finally:
        stop_group(browser)
        stop_group(app)
        dev.stop()


async def paused(url: str) -> str:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    thread = (await client.threads.create())["thread_id"]
    context = {"model": "scripted-server", "review": True}
    await client.runs.wait(thread, "tool-mad", input={"claim": CLAIM}, context=context)
    return str(thread)


async def decided(url: str, thread: str) -> dict[str, Any]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    for _ in range(90):
        state = await client.threads.get_state(thread)
        if not state["next"]:
            return dict(state["values"])
        await asyncio.sleep(1)
    pytest.fail(f"thread {thread} was not decided from the inbox")


async def test_the_inbox_lists_shows_and_decides_paused_threads(stack: tuple[str, str, str]):
    websockets = pytest.importorskip("websockets", reason="websockets is not installed")
    server, inbox, socket = stack
    accepted, answered = await paused(server), await paused(server)
    setting = {"id": "factdebate", "graphId": "tool-mad", "deploymentUrl": server}
    setting |= {"name": "factdebate", "selected": True, "createdAt": "2026-01-01T00:00:00Z"}
    view = f"{inbox}/?agent_inbox=factdebate&inbox=interrupted&offset=0&limit=10"
    async with websockets.connect(socket, max_size=50_000_000) as ws:
        page = Page(ws)
        await page.call("Page.enable")
        await page.call("Page.navigate", url=inbox + "/")
        await asyncio.sleep(2)
        stored = json.dumps(json.dumps([setting]))
        await page.eval(f"localStorage.setItem('inbox:agent_inboxes', {stored})")
        await page.call("Page.navigate", url=view)
        listed = await page.shows("tool-mad proposes SUPPORTS for: The Eiffel")
        assert listed.count("proposes SUPPORTS") >= 2  # both paused threads are listed
        await page.screenshot("agent-inbox-list.png")

        await page.call("Page.navigate", url=f"{view}&view_state_thread_id={accepted}")
        shown = await page.shows("Accept")
        for part in (CLAIM, "Proposed verdict: SUPPORTS", "debater_a: SUPPORTS", "Cost:"):
            assert part in shown, part
        await page.screenshot("agent-inbox-thread.png")
        await page.click("Accept")
        done = await decided(server, accepted)
        assert done["review"]["status"] == "approved" and done["verdict"] == "SUPPORTS"

        await page.call("Page.navigate", url=f"{view}&view_state_thread_id={answered}")
        await page.shows("Send Response")
        await page.type_response("REFUTES: a replica in Las Vegas")
        await page.click("Send Response")
        done = await decided(server, answered)
        assert (done["verdict"], done["review"]["status"]) == ("REFUTES", "overruled")
        assert done["review"]["note"] == "a replica in Las Vegas"
