"""Validation of user-supplied claims and questions."""

from __future__ import annotations

import unicodedata


class InputError(ValueError):
    """User input that cannot be verified as given."""


def clean_claim(text: object, max_chars: int = 2000) -> str:
    """Return the claim stripped and checked, or raise InputError saying what is wrong."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("the claim is not valid UTF-8 text") from exc
    if not isinstance(text, str):
        raise InputError(f"the claim must be text, got {type(text).__name__}")
    if "\x00" in text:
        raise InputError("the claim contains binary data (NUL bytes)")
    cleaned = " ".join(
        "".join(
            ch if unicodedata.category(ch)[0] != "C" or ch in "\n\t" else " " for ch in text
        ).split()
    )
    if not cleaned:
        raise InputError("the claim is empty")
    if len(cleaned) > max_chars:
        raise InputError(f"the claim is {len(cleaned)} characters long; the limit is {max_chars}")
    return cleaned
