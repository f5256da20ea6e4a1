"""Review decisions on the server: every route that resumes a paused review is checked, once.

A thread paused for review goes on only with a decision: one that fits the choices the thread
stored when it paused (else 422), on a thread not decided yet (else 409), one at a time (the
others 409). The routes: ``/threads/{id}/runs``, ``/runs/wait`` and ``/runs/stream`` with
``command.resume`` (or with neither input nor command, which would go on without a decision),
and the v2 protocol's ``/threads/{id}/commands`` with ``run.start`` (whose ``input`` is the
resume value while the thread waits) or ``input.respond`` (a resume keyed by interrupt id).
A state write (``POST /threads/{id}/state``) on a thread awaiting review is refused (422): it
would end the review without a decision. Nothing else ends or rewrites a review either: on a
thread awaiting review or decided, a run with new input, a ``command.update`` or ``goto``, a
run from an earlier checkpoint and a copy of the thread are refused (409 or 422, one line),
and a decided thread's state is not written again; ``POST /threads`` with ``supersteps``
(state no run made) is refused on any thread (``creation_problem``).
The review step itself (``factdebate.nodes.review``) also checks and records every decision
from what the thread stored, so a route this module does not know decides through it too.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from factdebate.nodes.review import REVIEW_NODE, ReviewError, is_review, read_decision

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
GetJson = Callable[[str], Awaitable[Any]]

THREAD_RUN = re.compile(r"^/threads/(?P<thread>[^/]+)/runs(/wait|/stream|/crons)?/?$")
COMMANDS = re.compile(r"^/threads/(?P<thread>[^/]+)/commands/?$")
STATE = re.compile(r"^/threads/(?P<thread>[^/]+)/state/?$")
"""A state write: on a thread awaiting review it would end the review without a decision."""
COPY = re.compile(r"^/threads/(?P<thread>[^/]+)/copy/?$")
THREADS = re.compile(r"^/threads/?$")
NO_DECISION = object()
"""The resume of a request that would take a thread on without any decision."""
NEW_INPUT = object()
"""The resume of a request that starts the thread again with new input (no decision)."""
DECIDED_STATUSES = ("approved", "overruled")
"""``review.status`` of a decided review."""


@dataclass(frozen=True)
class Resume:
    """A request that may resume a paused review: its thread, the value it resumes with."""

    thread: str
    value: Any  # a decision, a map of them keyed by interrupt id, NO_DECISION or NEW_INPUT
    route: str  # "runs", "run.start", "input.respond", "state" or "copy"
    steers: bool = False  # a command that changes the state or jumps (update, goto)
    rewinds: bool = False  # runs from an earlier checkpoint


def _steers(command: Any) -> bool:
    """Whether a command updates or jumps (RemoteGraph sends both keys, empty, with a resume)."""
    return isinstance(command, dict) and bool(command.get("update") or command.get("goto"))


def _rewinds(payload: dict[str, Any]) -> bool:
    """Whether a run request starts from a checkpoint it names (any of the server's spellings)."""
    if payload.get("checkpoint_id") or payload.get("checkpoint"):
        return True
    config = payload.get("config")
    configurable = config.get("configurable") if isinstance(config, dict) else None
    return isinstance(configurable, dict) and bool(
        configurable.get("checkpoint_id") or configurable.get("checkpoint_map")
    )


def creation_problem(path: str, method: str | None, data: Any) -> str | None:
    """Why a ``POST /threads`` is refused: ``supersteps`` write state no run made."""
    if (
        method == "POST"
        and THREADS.match(path)
        and isinstance(data, dict)
        and data.get("supersteps")
    ):
        return (
            "creating a thread from supersteps is refused on this server: it writes "
            "state (a review's decision among it) that no run made"
        )
    return None


def resume_of(path: str, method: str | None, data: Any) -> Resume | None:
    """The resume a POST request carries, if its route can take a paused thread on."""
    if method != "POST" or not isinstance(data, dict):
        return None
    run = THREAD_RUN.match(path)
    if run:
        command = data.get("command")
        marks = {"steers": _steers(command), "rewinds": _rewinds(data)}
        if isinstance(command, dict) and "resume" in command:
            return Resume(run["thread"], command["resume"], "runs", **marks)
        if data.get("input") is not None:
            return Resume(run["thread"], NEW_INPUT, "runs", **marks)
        return Resume(run["thread"], NO_DECISION, "runs", **marks)
    state = STATE.match(path)
    if state:  # e.g. the Agent Inbox's "Mark as Resolved" (the state written as finished)
        return Resume(state["thread"], NO_DECISION, "state")
    copy = COPY.match(path)
    if copy:
        return Resume(copy["thread"], NO_DECISION, "copy")
    commands = COMMANDS.match(path)
    params = data.get("params")
    if not commands or not isinstance(params, dict):
        return None
    if data.get("method") == "run.start":
        value = params.get("input")
        marks = {"steers": _steers(params.get("command")), "rewinds": _rewinds(params)}
        value = NO_DECISION if value is None else value
        return Resume(commands["thread"], value, "run.start", **marks)
    if data.get("method") == "input.respond":
        entries = params.get("responses")
        if not isinstance(entries, list):
            entries = [params]
        answers = {
            str(entry.get("interrupt_id")): entry.get("response")
            for entry in entries
            if isinstance(entry, dict)
        }
        return Resume(commands["thread"], answers, "input.respond")
    return None


def pending_choices(state: Any) -> tuple[bool, tuple[str, ...] | None, set[str]]:
    """From a thread's state (server JSON): (waits on review, its choices, its interrupt ids)."""
    tasks = state.get("tasks") if isinstance(state, dict) else None
    for task in tasks if isinstance(tasks, list) else []:
        if not isinstance(task, dict) or task.get("name") != REVIEW_NODE:
            continue
        for item in task.get("interrupts") or []:
            value = item.get("value") if isinstance(item, dict) else None
            if isinstance(value, dict) and is_review(value):
                choices = value.get("choices")
                ids = {str(item["id"])} if item.get("id") else set()
                return True, tuple(choices) if choices is not None else None, ids
    return False, None, set()


def resume_problem(resume: Any, state: Any) -> str | None:
    """Why ``resume`` cannot decide the review ``state`` waits on (None: it can, or no review)."""
    waiting, choices, ids = pending_choices(state)
    if not waiting:
        return None
    if resume is NO_DECISION:
        return (
            "the thread is awaiting review: resume it with a decision, "
            '{"approve": true} or {"verdict": ...}, with an optional "note", or '
            'LangChain\'s {"decisions": [{"type": "approve"}]}'
        )
    decisions = [resume]
    if isinstance(resume, dict) and resume and set(map(str, resume)) <= ids:
        decisions = list(resume.values())  # a resume map keyed by interrupt id
    for decision in decisions:
        try:
            read_decision(decision, choices)
        except ReviewError as exc:
            return str(exc)
    return None


def review_decided(state: Any) -> bool:
    """Whether a thread's state (server JSON) shows a finished run whose review was decided."""
    if not isinstance(state, dict) or state.get("next"):
        return False
    values = state.get("values")
    review = values.get("review") if isinstance(values, dict) else None
    return isinstance(review, dict) and review.get("status") in DECIDED_STATUSES


def decided_message(thread: str) -> str:
    """The one line a resume of a decided thread is refused with (HTTP 409)."""
    return f"thread {thread!r} is not awaiting review: it is already decided"


def _decision_shaped(value: Any) -> bool:
    """Whether ``value`` looks like a review decision in any format the review step reads."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return isinstance(value, dict) and bool(
        {"approve", "verdict", "decisions", "type"} & set(value)
    )


async def resume_refusal(resume: Resume, get_json: GetJson) -> tuple[int, str] | None:
    """The status and one line a resume is refused with, or None when it may go on.

    ``get_json`` reads a path of the server (the thread's state and its status).
    """
    state = await get_json(f"/threads/{resume.thread}/state")
    waiting, _, _ = pending_choices(state)
    guarded = guarded_refusal(resume, waiting, review_decided(state))
    if guarded:
        return guarded
    if not waiting:
        if review_decided(state) and (
            resume.route == "input.respond"
            or (resume.route == "runs" and resume.value is not NO_DECISION)
            or (resume.route == "run.start" and _decision_shaped(resume.value))
        ):
            return 409, decided_message(resume.thread)
        return None  # not a review: the server answers it as it would any run
    if resume.route == "state":
        return 422, (
            "the thread is awaiting review: writing its state would end the review without a "
            "decision; resume it with one (approve, edit, or reject naming a verdict)"
        )
    problem = resume_problem(resume.value, state)
    if problem:
        return 422, problem
    thread = await get_json(f"/threads/{resume.thread}")
    if isinstance(thread, dict) and thread.get("status") == "busy":
        return 409, decided_message(resume.thread) + " (another resume is running)"
    return None


def guarded_refusal(resume: Resume, waiting: bool, decided: bool) -> tuple[int, str] | None:
    """The refusal of a request that would end, rewrite or repeat a review without a decision."""
    if not (waiting or decided):
        return None
    where = "awaiting review" if waiting else "already decided"
    if resume.route == "copy":
        return 409, (
            f"thread {resume.thread!r} is {where}: a copy would make a second review of it; "
            "run the claim again on a new thread"
        )
    if resume.steers:
        return 422, (
            f"thread {resume.thread!r} is {where}: a command that updates its state or jumps "
            "(update, goto) would change the review without a decision"
        )
    if resume.rewinds:
        return 409, (
            f"thread {resume.thread!r} is {where}: a run from an earlier checkpoint would "
            "reopen or erase its review"
        )
    if resume.value is NEW_INPUT or (
        decided and resume.route == "run.start" and resume.value is not NO_DECISION
    ):
        return 409, (
            f"thread {resume.thread!r} is {where}: new input would end its review without a "
            "decision; run the claim on a new thread"
        )
    if decided and resume.route == "state":
        return 409, decided_message(resume.thread) + " (its decided state is not written again)"
    return None


def rejecting(resume: Resume, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` asking the server to refuse (not queue) a run while another is in flight."""
    if resume.route in ("state", "copy") or resume.value is NEW_INPUT:  # no resume
        return data
    if resume.route == "runs":
        return {**data, "multitask_strategy": "reject"}
    params = data.get("params")
    return {**data, "params": {**(params or {}), "multitaskStrategy": "reject"}}


class OneResumeAtATime:
    """One resume of a thread at a time in this process, from its check to its run's start."""

    def __init__(self) -> None:
        """No thread is being resumed."""
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    @asynccontextmanager
    async def hold(self, thread: str) -> AsyncIterator[Callable[[], None]]:
        """Hold ``thread`` for the block; yields a function that lets it go earlier."""
        lock = self._locks.get(thread)
        if lock is None:
            lock = self._locks[thread] = asyncio.Lock()
        await lock.acquire()
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                lock.release()

        try:
            yield release
        finally:
            release()


def released_at_start(send: Send, release: Callable[[], None]) -> Send:
    """``send`` that lets the thread go once the answer starts (by then the run exists)."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            release()
        await send(message)

    return wrapped


def conflict_as_decided(send: Send, thread: str, reply: Callable[..., Awaitable[None]]) -> Send:
    """``send`` that words the server's 409 (a run of the thread in flight) as a decision."""
    conflict = False

    async def wrapped(message: Message) -> None:
        nonlocal conflict
        if message["type"] == "http.response.start" and message.get("status") == 409:
            conflict = True
            return
        if conflict and message["type"] == "http.response.body":
            if not message.get("more_body", False):
                await reply(send, 409, decided_message(thread) + " (another resume is running)")
            return
        await send(message)

    return wrapped
