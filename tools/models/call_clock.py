"""Where every finished model call is told with its role, tokens and wall times, for pacing."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import NamedTuple


class TimedCall(NamedTuple):
    """One model call that brought an answer: who asked, its tokens, when it ran (monotonic s)."""

    role: str
    input_tokens: int
    output_tokens: int
    started: float
    ended: float


Listener = Callable[[TimedCall], None]

_LISTENER: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "factdebate_call_clock", default=None
)


def bind(listener: Listener) -> contextvars.Token[Listener | None]:
    """Tell ``listener`` about the calls of this context (and the tasks it starts)."""
    return _LISTENER.set(listener)


def unbind(token: contextvars.Token[Listener | None]) -> None:
    """Restore the listener bound before ``bind`` returned ``token``."""
    _LISTENER.reset(token)


def tell(call: TimedCall) -> None:
    """Tell the bound listener about one answered call (nothing happens when none is bound)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(call)
