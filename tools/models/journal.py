"""Where every request sent to a provider is told, as it leaves and as it ends: a sink per context.

llm.py notes each attempt twice: ``outcome="sent"`` just before it goes (so a process killed
mid-request still leaves it on the bill), then ``answered``, ``rejected`` (retried) or
``failed`` (the call's last) when it ends.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

Sink = Callable[[dict[str, Any]], None]
"""Takes one entry: role, agent, stage, round, outcome, status, input_tokens, output_tokens, at
(unix seconds)."""

_SINK: contextvars.ContextVar[Sink | None] = contextvars.ContextVar(
    "factdebate_journal", default=None
)


def bind(sink: Sink) -> contextvars.Token[Sink | None]:
    """Send the requests of this context (and the tasks it starts) to ``sink``."""
    return _SINK.set(sink)


def unbind(token: contextvars.Token[Sink | None]) -> None:
    """Restore the sink that was bound before ``bind`` returned ``token``."""
    _SINK.reset(token)


def note(entry: dict[str, Any]) -> None:
    """Tell the bound sink about one request (nothing happens when none is bound)."""
    sink = _SINK.get()
    if sink is not None:
        sink(entry)
