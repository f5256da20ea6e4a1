"""Before a run: one tiny call per remote model, so a provider that cannot be reached stops it.

A run against a dead endpoint would otherwise attempt every call of the debate (each retried)
and end with no verdict. Only failures that no retry can mend stop the run here: no
connection (refused, unknown host), refused credentials (401/403) and an unknown model or
path (404). A rate limit, a 5xx or a slow answer lets the run go on, where such faults are
retried per call as before.
"""

from __future__ import annotations

import secrets
import socket
import threading
from typing import Any

from langchain_core.messages import HumanMessage

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.core.secrets import redact
from factdebate.tools.models.llm import status_of
from factdebate.tools.models.providers import with_output_cap

PROBE_TIMEOUT_S = 10.0
"""Longest wait for the probe's answer; a slower provider is not refused, the run goes on."""
PROBE_MAX_TOKENS = 8
PROBE_MARK = "(connection check"
"""Words in every probe prompt, so a test server can tell the probe from the run's calls."""
_AUTH = {401: "the provider refused the credentials", 403: "the provider denied access"}


class ModelUnreachableError(ModelConfigError):
    """A role's model cannot be reached: no connection, refused credentials, or unknown."""


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def unreachable_cause(exc: BaseException) -> str | None:
    """One line saying why no call to this model can succeed, or None when a retry might."""
    chain = _chain(exc)
    names = {cls.__name__.lower() for e in chain for cls in type(e).__mro__}
    if any("timeout" in name for name in names):
        return None
    status = status_of(exc)
    detail = redact(f"{type(exc).__name__}: {exc}").splitlines()[0][:300]
    if status in _AUTH:
        return f"{_AUTH[status]} (HTTP {status}; {detail})"
    if status == 404:
        return f"unknown model or endpoint (HTTP 404; {detail})"
    if status is not None:
        return None
    network = any(isinstance(e, ConnectionError | socket.gaierror) for e in chain)
    if network or any("connect" in name for name in names):
        root = chain[-1]
        reason = redact(f"{type(root).__name__}: {root}").splitlines()[0][:300]
        return f"no connection ({reason})"
    return None


def probe(spec: str, model: Any, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Send ``model`` one tiny prompt; raise when it shows the model cannot be reached.

    Waits at most ``timeout`` seconds: a provider that has not answered by then is left to
    the run (its calls time out and retry as usual).

    Raises:
        ModelUnreachableError: no connection, 401/403 or 404, with the cause in one line.
    """
    # A fresh word each time: a server counting repeated prompts never sees this one twice.
    prompt = f"Reply with the word OK. {PROBE_MARK} {secrets.token_hex(4)})"
    failure: list[BaseException] = []

    def call() -> None:
        try:
            with_output_cap(model, PROBE_MAX_TOKENS).invoke([HumanMessage(prompt)])
        except Exception as exc:  # provider SDKs raise many types; classified below
            failure.append(exc)

    worker = threading.Thread(target=call, name="factdebate-model-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive() or not failure:
        return
    cause = unreachable_cause(failure[0])
    if cause is not None:
        raise ModelUnreachableError(f"cannot reach model {redact(spec)}: {cause}; nothing was run")
