"""Validation of user-supplied claims, questions and documents."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from tools.records import Evidence


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


def given_documents(raw: object, what: str = "document") -> list[Evidence]:
    """Check caller-supplied documents and fill missing optional fields.

    Raises:
        InputError: not a list, or an item without a ``text`` string.
    """
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise InputError(f"{what}s must be a list of documents, got {type(raw).__name__}")
    docs: list[Evidence] = []
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise InputError(f"{what} {i} must be an object with a 'text' string")
        docs.append(
            Evidence(
                id=str(item.get("id") or f"given-{i}"),
                title=str(item.get("title") or ""),
                text=item["text"],
                source=str(item.get("source") or "given"),
                score=float(item.get("score") or 0.0),
            )
        )
    return docs
