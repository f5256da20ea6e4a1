"""Numbers from environment variables: parsed as written, or refused in one line."""

from __future__ import annotations

import math
import os
import re

from factdebate.tools.core.errors import FactDebateError, SettingsError

_WHOLE = re.compile(r"[0-9]+")
"""ASCII digits only: ``str.isdigit`` and ``int`` also take ``²``, ``٣`` or ``1_000``."""
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
MAX_CHARS = 32


ErrorType = type[FactDebateError]


def _raw(name: str) -> str | None:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return None
    return raw.strip()


def _refuse(name: str, raw: str, wanted: str, error: ErrorType) -> FactDebateError:
    shown = raw if len(raw) <= MAX_CHARS else raw[:MAX_CHARS] + "..."
    return error(f"{name} must be {wanted}, got {shown!r}")


def env_int(
    name: str,
    default: int,
    lo: int,
    hi: int,
    *,
    error: ErrorType = SettingsError,
    other: str = "",
) -> int:
    """The whole number in environment variable ``name`` (``lo..hi``), else ``default``.

    Only ASCII digits are read (no sign, no ``_``, no other script's digits); unset or blank
    gives ``default``. ``other`` names what else the caller takes (``" or 'idle'"``), for
    the message.

    Raises:
        error: anything else (``SettingsError`` unless the caller names its own), in one
            line naming the variable and its range.
    """
    raw = _raw(name)
    if raw is None:
        return default
    if not _WHOLE.fullmatch(raw) or len(raw) > MAX_CHARS or not lo <= int(raw) <= hi:
        raise _refuse(name, raw, f"a whole number {lo}..{hi}{other}", error)
    return int(raw)


def env_float(
    name: str, default: float, lo: float, hi: float, *, error: ErrorType = SettingsError
) -> float:
    """The decimal number in environment variable ``name`` (``lo..hi``), else ``default``.

    Written with ASCII digits and at most one ``.`` (``10``, ``2.5``, ``.5``); no sign,
    exponent, ``inf`` or ``nan``; unset or blank gives ``default``.

    Raises:
        error: anything else (``SettingsError`` unless the caller names its own), in one
            line naming the variable and its range.
    """
    raw = _raw(name)
    if raw is None:
        return default
    if not _NUMBER.fullmatch(raw) or len(raw) > MAX_CHARS:
        raise _refuse(name, raw, f"a number {lo:g}..{hi:g}", error)
    value = float(raw)
    if not math.isfinite(value) or not lo <= value <= hi:
        raise _refuse(name, raw, f"a number {lo:g}..{hi:g}", error)
    return value
