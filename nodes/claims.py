"""Validation of user-supplied claims, questions and documents."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from factdebate.nodes.evidence_block import sanitize
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.records import Evidence


class InputError(FactDebateError, ValueError):
    """User input that cannot be verified as given."""


MAX_FILE_BYTES = 64 * 1024 * 1024  # largest documents file a run reads (not an index build)
MAX_TEXT_BYTES = 1024 * 1024  # largest claim, answer or references file (stdin included)


def check_user_file(path: Path, max_bytes: int, what: str, *, folder_ok: bool = False) -> None:
    """Refuse, with one line, a path that is missing, a folder, a device or pipe, or too big."""
    if not path.exists():
        raise InputError(f"no such file: {path}")
    if path.is_dir():
        if folder_ok:
            return
        raise InputError(f"{path} is a folder; the {what} must be a file")
    if not path.is_file():
        raise InputError(f"{path} is not a regular file (a device or a pipe); the {what} must be")
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{path} is {size} bytes; the limit for the {what} is {max_bytes}")


def read_limited(stream: BinaryIO, max_bytes: int, what: str) -> bytes:
    """Read at most ``max_bytes`` from a binary stream; more than that is an InputError."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"the {what} is over {max_bytes} bytes")
    return data


def read_user_file(path: Path, what: str, max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a user's text file, read with a size limit (folders and devices refused)."""
    check_user_file(path, max_bytes, what)
    try:
        with path.open("rb") as fh:
            return read_limited(fh, max_bytes, what)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate, which no UTF-8 text holds: an argument's undecodable byte, say."""


def clean_claim(text: object, max_chars: int = 2000) -> str:
    """Return the claim stripped and checked, or raise InputError saying what is wrong.

    The text goes into prompts, so it passes the one sanitiser too (chat-template control
    tokens and fence tags neutralised); a jury's claim, written by the clerk, comes here.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("the claim is not valid UTF-8 text") from exc
    if not isinstance(text, str):
        raise InputError(f"the claim must be text, got {type(text).__name__}")
    if "\x00" in text:
        raise InputError("the claim contains binary data (NUL bytes)")
    bad = _SURROGATE.search(text)
    if bad is not None:  # an argument's invalid byte, kept by Python as U+DC80..U+DCFF
        code = ord(bad.group())
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise InputError(
            f"the claim is not valid UTF-8 text ({byte} at character {bad.start() + 1})"
        )
    cleaned = " ".join(
        "".join(
            ch if unicodedata.category(ch)[0] != "C" or ch in "\n\t" else " " for ch in text
        ).split()
    )
    cleaned = sanitize(cleaned, None)
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
