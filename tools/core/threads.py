"""Blocking calls in daemon threads: a call that never returns never holds the exit."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` in a new daemon thread and await its result (context vars carried).

    ``asyncio.to_thread`` uses the loop's default executor, whose threads ``asyncio.run``
    and the interpreter wait for at exit: a socket that drips one byte at a time kept a
    finished command from ever printing its verdict. A call given up by ``wait_for`` here
    goes on in the background and ends with the process.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # given up (a timeout cancelled the wait)
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as exc:  # handed to the awaiting task as it is
            outcome: tuple[bool, Any] = (False, exc)
        else:
            outcome = (True, result)
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="factdebate-tool-call", daemon=True).start()
    return await future
