"""Operator-issued keys of a served app: each principal's identity and role, stored as digests.

The operator names a key file in ``FACTDEBATE_SERVER_KEYS``; it holds, per principal, an
identity, a role and the SHA-256 of the key (never the key). ``python -m
factdebate.server.keys issue FILE IDENTITY ROLE`` prints a new key once and stores its
digest (issuing again for the same identity rotates it); ``revoke FILE IDENTITY`` removes
one. The server reads the file again whenever it changes, so both take effect at once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.files import read_bounded, write_atomic

KEYS_ENV = "FACTDEBATE_SERVER_KEYS"
"""The key file of a served app; unset: the server is open (loopback only, one user)."""
OPEN_ENV = "FACTDEBATE_SERVER_OPEN"
"""``true``: serve without keys on an address beyond loopback too (the operator's choice)."""
Role = Literal["operator", "reviewer", "client"]
ROLES: tuple[Role, ...] = ("operator", "reviewer", "client")
MAX_KEY_FILE_BYTES = 1024 * 1024
MAX_PRINCIPALS = 10_000
KEY_PREFIX = "fdk_"
_IDENTITY = r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$"


class KeyFileError(FactDebateError, ValueError):
    """A key file that cannot be read or holds something other than principals (one line)."""


class Principal(BaseModel):
    """One principal: who it is, what it may do, the SHA-256 (hex) of its key."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    identity: str = Field(pattern=_IDENTITY)
    role: Role
    key_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class KeyFile(BaseModel):
    """A key file: its principals, each identity and each key once."""

    model_config = ConfigDict(extra="forbid")
    principals: list[Principal] = Field(default_factory=list, max_length=MAX_PRINCIPALS)

    @model_validator(mode="after")
    def _unique(self) -> KeyFile:
        identities = [p.identity for p in self.principals]
        digests = [p.key_sha256 for p in self.principals]
        if len(set(identities)) != len(identities):
            raise ValueError("an identity is listed twice")
        if len(set(digests)) != len(digests):
            raise ValueError("two principals share one key")
        return self


def key_digest(key: str) -> str:
    """The SHA-256 (hex) a key file stores for ``key``."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def read_key_file(path: Path) -> KeyFile:
    """The principals of a key file, checked.

    Raises:
        KeyFileError: the file is missing, not a regular file, over 1 MiB, not JSON, or not
            a list of principals (identity, role, key_sha256), named in one line.
    """
    text = read_bounded(Path(path), MAX_KEY_FILE_BYTES, "key file", KeyFileError)
    try:
        return KeyFile.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "file"
        raise KeyFileError(f"key file {path}: {where}: {first['msg']}") from None


def write_key_file(path: Path, keys: KeyFile) -> None:
    """Write ``keys`` to ``path`` at once, readable by its owner only."""
    text = json.dumps(keys.model_dump(), indent=2) + "\n"
    write_atomic(Path(path), text)
    os.chmod(path, 0o600)


def issue(path: Path, identity: str, role: str) -> str:
    """A new key for ``identity`` with ``role``, its digest stored (any older key replaced).

    Raises:
        KeyFileError: an unreadable key file, or a bad identity or role.
    """
    keys = read_key_file(path) if Path(path).exists() else KeyFile()
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    try:
        entry = Principal(identity=identity, role=role, key_sha256=key_digest(key))  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise KeyFileError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    kept = [p for p in keys.principals if p.identity != identity]
    write_key_file(path, KeyFile(principals=[*kept, entry]))
    return key


def revoke(path: Path, identity: str) -> bool:
    """Remove ``identity``'s key; whether it had one.

    Raises:
        KeyFileError: an unreadable key file.
    """
    keys = read_key_file(path)
    kept = [p for p in keys.principals if p.identity != identity]
    if len(kept) == len(keys.principals):
        return False
    write_key_file(path, KeyFile(principals=kept))
    return True


@dataclass
class KeyStore:
    """The principals of one key file, read again whenever the file changes."""

    path: Path
    _seen: tuple[int, int, int] | None = None
    _by_digest: dict[str, Principal] | None = None

    def principals(self) -> dict[str, Principal]:
        """The principals by key digest, as the file now says.

        Raises:
            KeyFileError: the file cannot be read or is not a key file (nobody is let in).
        """
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise KeyFileError(f"key file {self.path}: {exc.strerror or exc}") from None
        seen = (info.st_mtime_ns, info.st_size, info.st_ino)
        if self._by_digest is None or seen != self._seen:
            self._by_digest = None
            keys = read_key_file(self.path)
            self._by_digest = {p.key_sha256: p for p in keys.principals}
            self._seen = seen
        return self._by_digest

    def principal(self, key: str) -> Principal | None:
        """Who holds ``key``, or None."""
        digest = key_digest(key)
        for known, principal in self.principals().items():
            if hmac.compare_digest(known, digest):
                return principal
        return None


def configured_store() -> KeyStore | None:
    """The key file ``FACTDEBATE_SERVER_KEYS`` names (checked now), or None: an open server.

    Raises:
        KeyFileError: the variable names a file that cannot be read as a key file.
    """
    named = os.environ.get(KEYS_ENV, "").strip()
    if not named:
        return None
    store = KeyStore(Path(named).expanduser().absolute())
    store.principals()
    return store


def open_allowed() -> bool:
    """Whether the operator said to serve without keys beyond loopback (``true``)."""
    return os.environ.get(OPEN_ENV, "").strip().lower() == "true"


_USAGE = (
    "usage: python -m factdebate.server.keys issue FILE IDENTITY ROLE | revoke FILE IDENTITY"
    f" | list FILE   (ROLE: {', '.join(ROLES)})"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Issue, revoke or list keys of a key file; prints a new key once (to stdout)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if len(args) == 4 and args[0] == "issue":
            print(issue(Path(args[1]), args[2], args[3]))
            return 0
        if len(args) == 3 and args[0] == "revoke":
            if not revoke(Path(args[1]), args[2]):
                print(f"error: {args[2]!r} has no key in {args[1]}", file=sys.stderr)
                return 2
            return 0
        if len(args) == 2 and args[0] == "list":
            for p in read_key_file(Path(args[1])).principals:
                print(f"{p.identity}\t{p.role}")
            return 0
    except KeyFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(_USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
