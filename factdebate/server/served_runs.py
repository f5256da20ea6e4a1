"""Runs the served app's own endpoints start: one step reported as each finishes, one-line errors.

``/mcp`` (``factdebate.server.mcp_endpoint``) and ``/a2a`` (``factdebate.server.a2a_endpoint``)
start a method's run through the server's in-process LangGraph client, as any client would
(the middleware and the served graph check its settings), stream its updates and values,
and answer with the result contract (``factdebate.api.contract``) as JSON. A caller's
connection that goes away ends its run (``on_disconnect="cancel"``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.secrets import redact

MAX_MESSAGE_CHARS = 300
Step = Callable[[int, str], Awaitable[None]]
"""What hears of each finished step: its number (from 1) and the words it says."""
Started = Callable[[], Awaitable[None]]
"""What hears that the server accepted the run (its first streamed part)."""


class RunError(FactDebateError):
    """A served run that gave no result: its one line."""


class RunRefused(RunError):
    """The server refused to start the run (a bad argument or setting): its one line."""


class RunFailed(RunError):
    """The run started and ended without a result: its one line."""


def one_line(text: object) -> str:
    """A message as one bounded line, its secrets redacted (a refusal may quote a setting)."""
    return redact(" ".join(str(text).split()))[:MAX_MESSAGE_CHARS] or "the run failed"


def progress_words(node: str, update: Any) -> str:
    """What a finished step says: its node and, where it shows one, its round."""
    rounds: Any = update.get("rounds") if isinstance(update, dict) else None
    turns = update.get("transcript") if isinstance(update, dict) else None
    if rounds is None and isinstance(turns, list) and turns and isinstance(turns[-1], dict):
        rounds = turns[-1].get("round")
    return f"{node} finished" + (f" (round {rounds})" if isinstance(rounds, int) else "")


def result_text(result: dict[str, Any]) -> str:
    """A result contract as JSON text."""
    return json.dumps(result, ensure_ascii=False)


def _refusal_detail(exc: Exception) -> object:
    """The server's own words for a refused request (a 422's ``detail``), else the error."""
    response: Any = getattr(exc, "response", None)
    if response is None:
        return exc
    try:
        return response.json().get("detail", response.text)
    except (ValueError, AttributeError):
        return response.text


async def run_served(
    assistant: str,
    payload: dict[str, Any],
    settings: dict[str, Any] | None,
    on_step: Step,
    on_start: Started | None = None,
) -> dict[str, Any]:
    """Run ``assistant`` on this server, tell ``on_step`` of each finished step, return its result.

    Raises:
        RunRefused: the server refused the run before it started.
        RunFailed: the run ended with an error or without a final state.
    """
    from langgraph_sdk import get_client

    from factdebate.api import contract

    client = get_client(url=None)  # this server, in process
    steps, values, failure, started = 0, None, None, False
    try:
        async for part in client.runs.stream(
            None,
            assistant,
            input=payload,
            context=settings or None,
            stream_mode=["updates", "values"],
            on_disconnect="cancel",  # the caller went away: its run ends too
        ):
            if not started:
                started = True
                if on_start is not None:
                    await on_start()
            if part.event == "updates" and isinstance(part.data, dict):
                for node, update in part.data.items():
                    steps += 1
                    await on_step(steps, progress_words(node, update))
            elif part.event == "values" and isinstance(part.data, dict):
                values = part.data
            elif part.event == "error":
                failure = part.data
    except Exception as exc:  # the server refused the run (e.g. a 422): its own one line
        error = RunFailed if started else RunRefused
        raise error(one_line(_refusal_detail(exc))) from None
    if failure is not None or values is None:
        message = failure.get("message") if isinstance(failure, dict) else failure
        raise RunFailed(one_line(message or "the run ended without a result"))
    return contract(values)
