"""Keep known secrets out of every output: text, nested results, log records and warnings."""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Callable
from typing import Any

SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
"""Environment variables whose names end so hold secrets (OPENAI_API_KEY, HF_TOKEN, ...)."""
REDACTED = "[redacted]"
_SCHEME = r"\b[A-Za-z][A-Za-z0-9+.-]*://"
_URL_AUTHORITY = re.compile(
    rf"(?P<scheme>{_SCHEME})(?P<authority>(?:(?!{_SCHEME})[^\s/\\\"'<>`])*)"
)
"""A URL's scheme and what follows it up to its path (or the next URL): ``user:password@host``
and, deliberately, any ``?`` or ``#`` before the first ``/`` (a password may hold them)."""
_URL_QUERY_SECRET = re.compile(
    r"(?P<name>[?&;](?:[A-Za-z0-9]+[_.-])*(?:api[_-]?key|apikey|token|secret|password|passwd"
    r"|pwd|signature|sig|auth|key|credentials?)=)(?P<value>[^&;#\s\"'<>]+)",
    re.IGNORECASE,
)
"""A secret-looking query parameter (``?api_key=...``, ``&access_token=...``, ``?key=...``)."""
_installed = False
_known: list[tuple[object, tuple[str, ...]]] = []  # (environment fingerprint, secret values)


def _secret_values() -> tuple[str, ...]:
    """Values of the secret variables now in the environment (recomputed when it changes).

    Every reply passes through ``redact``; decoding the whole environment each time cost
    more than the redaction. CPython keeps the environment in ``os.environ._data``, whose
    items are a cheap fingerprint; elsewhere the values are read every time.
    """
    data = getattr(os.environ, "_data", None)
    fingerprint = tuple(data.items()) if isinstance(data, dict) else None
    if fingerprint is not None and _known and _known[0][0] == fingerprint:
        return _known[0][1]
    values = tuple(
        value
        for name, value in os.environ.items()
        if name.upper().endswith(SECRET_SUFFIXES) and len(value) >= 6
    )
    if fingerprint is not None:
        _known[:] = [(fingerprint, values)]
    return values


def _userinfo(match: re.Match[str]) -> str:
    """The URL with its userinfo redacted: everything before the authority's last ``@``.

    The URL standard splits an authority at its last ``@`` and the user from the password at
    the first ``:``, so a password may hold ``@``, ``]``, ``:`` or ``%40``; the user name is
    kept (``user:[redacted]@host``), a lone token (``TOKEN@host``) is not.
    """
    userinfo, at, host = match["authority"].rpartition("@")
    if not at:
        return match[0]
    user, colon, _ = userinfo.partition(":")
    shown = f"{user}:{REDACTED}" if colon else REDACTED
    return f"{match['scheme']}{shown}@{host}"


def redact_urls(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``[redacted]``.

    ``http://user:KEY@host`` keeps the user name, ``https://TOKEN@host`` loses the whole user
    part, and secret-looking query parameters (``api_key``, ``token``, ``key``, ``sig``...)
    lose their values: a key inside a model URL (``openai-compatible:m@http://u:KEY@host/v1``)
    reaches no file and no terminal.
    """
    if "://" not in text and "=" not in text:
        return text
    text = _URL_AUTHORITY.sub(_userinfo, text)
    if "=" in text:
        text = _URL_QUERY_SECRET.sub(lambda m: f"{m['name']}{REDACTED}", text)
    return text


def redact(text: str) -> str:
    """Replace secrets in ``text`` with ``[redacted]``: the one redaction every output passes.

    Secrets are the values of environment variables whose names end in ``_API_KEY``,
    ``_TOKEN`` or ``_SECRET`` (six characters or more) and credentials written inside URLs
    (``redact_urls``); error messages, model replies, settings and results pass through here
    before they are recorded, printed or written to disk.
    """
    for value in _secret_values():
        if value in text:
            text = text.replace(value, REDACTED)
    return redact_urls(text)


def redact_deep(value: Any) -> Any:
    """``value`` with every string inside it (dict keys and values, list items) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_deep(k): redact_deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_deep(v) for v in value)
    return value


def _redacting_factory(base: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it itself
            return record
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return record

    return make


def install_secret_filters() -> None:
    """Redact secrets in every log record and warning from now on (idempotent).

    SDKs log and warn on their own (LangSmith's tracing client printed a rejected key in
    its warnings); their records and warnings pass through ``redact`` before any handler.
    """
    global _installed
    if _installed:
        return
    _installed = True
    logging.setLogRecordFactory(_redacting_factory(logging.getLogRecordFactory()))
    show = warnings.showwarning

    def show_redacted(message: Warning | str, *args: Any, **kwargs: Any) -> None:
        show(redact(str(message)), *args, **kwargs)

    warnings.showwarning = show_redacted


def install_redacted_tracebacks() -> None:
    """Print an uncaught exception's traceback redacted (for a command-line program only).

    A bug still shows its traceback, but a URL with a password in a frame's message or a
    key quoted by a library's error is shown as ``[redacted]`` like every other line.
    """
    import sys
    import traceback

    def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))))

    sys.excepthook = hook
