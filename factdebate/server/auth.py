"""Who calls the served app and what each role may do: LangGraph custom auth (``langgraph.json``).

``langgraph.json`` registers ``auth`` below under ``auth.path``; the server authenticates
every request to its API routes with it and asks its handlers about every resource action
(threads, runs on a thread, assistants, crons, the store), whatever route the action came
by. With a key file (``FACTDEBATE_SERVER_KEYS``, see ``factdebate.server.keys``) a caller
presents its key (``Authorization: Bearer KEY`` or ``X-Api-Key: KEY``, as ``langgraph_sdk``
sends ``api_key``) and acts in its principal's role:

- ``client``: creates threads (owned by it) and assistants, runs and reads its own threads
  only; never decides a review, steers a paused run (``command``) or runs from an earlier
  checkpoint;
- ``reviewer``: reads every thread and resumes one with a decision (``command.resume``),
  nothing else;
- ``operator``: sees and manages everything (assistants, crons, the store, deletes), but does
  not decide reviews.

Without a key file the server is open to one user (``local``, every role) and only on a
loopback address: on another address it refuses to start, and any request that reaches it
anyway is refused, unless ``FACTDEBATE_SERVER_OPEN=true``.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import urlsplit

from langgraph_sdk import Auth

from factdebate.review.server_queue import waiting_request
from factdebate.server.decisions import (
    DECIDED_STATUSES,
    NEW_INPUT,
    NO_DECISION,
    Resume,
    guarded_refusal,
)
from factdebate.server.keys import (
    KEYS_ENV,
    OPEN_ENV,
    KeyFileError,
    KeyStore,
    configured_store,
    open_allowed,
)
from factdebate.tools.core.errors import FactDebateError

OWNER = "owner"
"""Thread metadata naming the identity that owns the thread (the server writes it)."""
LOCAL = "local"
"""The identity of an open server's one user."""
OPEN_ROLES = ["operator", "reviewer", "client"]
"""What the one user of an open server may do: everything."""
log = logging.getLogger("factdebate.server.auth")


class OpenServerError(FactDebateError, RuntimeError):
    """An open server (no key file) asked to listen beyond loopback without the operator's say."""


def loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    if not host:
        return False
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_host() -> str | None:
    """The host the server was started on (``langgraph dev`` sets ``LANGGRAPH_API_URL``)."""
    url = os.environ.get("LANGGRAPH_API_URL", "")
    return urlsplit(url).hostname if url else None


def _startup() -> KeyStore | None:
    """The key store, or None after checking that an open server may start here."""
    store = configured_store()
    if store is not None:
        log.warning("factdebate: keys from %s: every request needs a key", store.path)
        return store
    host = served_host()
    if host is not None and not loopback(host) and not open_allowed():
        raise OpenServerError(
            f"refusing to serve {host} without keys: set {KEYS_ENV} to a key file, or "
            f"{OPEN_ENV}=true to serve it open anyway"
        )
    log.warning(
        "factdebate: no key file (%s): an open single-user server, anyone who reaches it "
        "may do anything",
        KEYS_ENV,
    )
    return None


STORE = _startup()


def presented_key(headers: dict[bytes, bytes]) -> str | None:
    """The key a request presents: ``Authorization: Bearer KEY`` or ``X-Api-Key: KEY``."""
    authorization = headers.get(b"authorization", b"").decode("latin-1").strip()
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    key = headers.get(b"x-api-key", b"").decode("latin-1").strip()
    return key or None


def caller(headers: dict[bytes, bytes], server_host: str | None) -> tuple[str, list[str]]:
    """The identity and roles of a request, from its headers.

    Raises:
        Auth.exceptions.HTTPException: 401 for a missing or unknown key (or an unreadable key
            file), 403 for an open server reached beyond loopback.
    """
    if STORE is None:
        if not loopback(server_host) and not open_allowed():
            raise Auth.exceptions.HTTPException(
                403, f"this server has no keys ({KEYS_ENV}) and serves loopback only"
            )
        return LOCAL, list(OPEN_ROLES)
    key = presented_key(headers)
    if key is None:
        raise Auth.exceptions.HTTPException(401, "a key is required: Authorization: Bearer KEY")
    try:
        principal = STORE.principal(key)
    except KeyFileError as exc:
        log.error("factdebate: %s", exc)
        raise Auth.exceptions.HTTPException(401, "the server's key file cannot be read") from None
    if principal is None:
        raise Auth.exceptions.HTTPException(401, "unknown key")
    return principal.identity, [principal.role]


RUNNERS = frozenset({"client", "operator"})
"""The roles that may start runs."""


def run_refusal(scope: Mapping[str, Any]) -> tuple[int, str] | None:
    """Status and one line refusing a request that starts runs outside LangGraph's auth, if so.

    The custom app's ``/mcp`` route starts runs through the server's in-process client, which
    LangGraph's auth does not see: the caller's key is checked here instead, by the same rule.
    """
    headers = {bytes(k).lower(): bytes(v) for k, v in scope.get("headers", [])}
    server = scope.get("server") or (None, None)
    try:
        identity, roles = caller(headers, server[0])
    except Auth.exceptions.HTTPException as exc:
        return exc.status_code, str(exc.detail)
    if not RUNNERS & set(roles):
        return 403, f"{identity} ({'/'.join(sorted(roles))}) may not start runs on this server"
    return None


auth = Auth()


@auth.authenticate
async def authenticate(
    headers: dict[bytes, bytes], scope: dict[str, Any]
) -> Auth.types.MinimalUserDict:
    """The caller's identity and roles (its permissions), from the key it presents."""
    server = scope.get("server") or (None, None)
    identity, roles = caller(headers, server[0])
    return {"identity": identity, "permissions": roles, "display_name": identity}


def _roles(ctx: Auth.types.AuthContext) -> set[str]:
    return set(ctx.permissions or ())


def _refuse(ctx: Auth.types.AuthContext, what: str) -> NoReturn:
    roles = "/".join(sorted(_roles(ctx))) or "no role"
    raise Auth.exceptions.HTTPException(
        403, f"{ctx.user.identity} ({roles}) may not {what} on this server"
    )


def _own(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Mark ``value``'s metadata (where it has some) as the caller's; filter on the owner."""
    metadata = value.get("metadata") if isinstance(value, dict) else None
    if isinstance(metadata, dict):
        metadata[OWNER] = ctx.user.identity
    elif isinstance(value, dict) and "metadata" in value:
        value["metadata"] = {OWNER: ctx.user.identity}
    return {OWNER: ctx.user.identity}


@auth.on
async def operator_only(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every action no handler below names is the operator's (crons, the store, deletes...)."""
    if "operator" not in _roles(ctx):
        _refuse(ctx, f"{ctx.resource}.{ctx.action}")


@auth.on.threads.create
async def create_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Clients create threads they own; the operator any; a reviewer none."""
    roles = _roles(ctx)
    if "operator" in roles:
        if isinstance(value.get("metadata"), dict):
            value["metadata"].setdefault(OWNER, ctx.user.identity)
        return None
    if "client" in roles:
        return _own(ctx, value)
    _refuse(ctx, "create threads")


@auth.on.threads.read
async def read_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A client reads its own threads; the operator and reviewers every thread."""
    return _readers(ctx, "read threads")


def _readers(ctx: Auth.types.AuthContext, what: str) -> Auth.types.FilterType | None:
    """No filter for the operator and reviewers; a client's own threads; else refused."""
    roles = _roles(ctx)
    if roles & {"operator", "reviewer"}:
        return None
    if "client" in roles:
        return {OWNER: ctx.user.identity}
    _refuse(ctx, what)


@auth.on.threads.search
async def search_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A client finds its own threads only; the operator and reviewers every thread."""
    return _readers(ctx, "read threads")


@auth.on.threads.update
async def update_thread(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A client changes (metadata, state, cancels runs of) its own threads; the operator any."""
    roles = _roles(ctx)
    if "operator" in roles:
        return None
    if "client" in roles:
        return _own(ctx, value) if "metadata" in value else {OWNER: ctx.user.identity}
    _refuse(ctx, "change threads")


def _run_parts(value: Any) -> tuple[dict[str, Any], bool, bool]:
    """(command, has input, starts from a checkpoint) of a run being created."""
    kwargs = value.get("kwargs") or {}
    command = kwargs.get("command") or {}
    config = kwargs.get("config") or {}
    configurable = config.get("configurable") if isinstance(config, dict) else None
    rewinds = isinstance(configurable, dict) and bool(configurable.get("checkpoint_id"))
    return (command if isinstance(command, dict) else {}), kwargs.get("input") is not None, rewinds


async def refuse_review_rewrite(
    thread_id: Any, owner: str | None, *, steers: bool, rewinds: bool, new_input: bool
) -> None:
    """Refuse a run that would end, rewrite or reopen a thread's review, whatever its route.

    The middleware answers the HTTP routes first; this check, run where the server creates
    the run, holds for the WebSocket and any other route too. The thread is read through the
    server's in-process client; a thread ``owner`` (a client) does not own is left to the
    server, which answers it as unknown.

    Raises:
        Auth.exceptions.HTTPException: 409/422 with the middleware's one line.
    """
    from langgraph_sdk import get_client

    try:
        thread = await get_client().threads.get(str(thread_id))
    except Exception:  # no such thread yet (or no in-process client): nothing to protect
        return
    if owner is not None and (thread.get("metadata") or {}).get(OWNER) != owner:
        return
    values = thread.get("values") or {}
    review = values.get("review") if isinstance(values, dict) else None
    waiting = waiting_request(dict(thread)) is not None
    decided = (
        thread.get("status") not in ("interrupted", "busy")
        and isinstance(review, dict)
        and review.get("status") in DECIDED_STATUSES
    )
    value = NEW_INPUT if new_input else NO_DECISION
    change = Resume(str(thread_id), value, "runs", steers=steers, rewinds=rewinds)
    refusal = guarded_refusal(change, waiting, decided)
    if refusal:
        raise Auth.exceptions.HTTPException(*refusal)


@auth.on.threads.create_run
async def create_run(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Who may start which run: a decision is a reviewer's, input a client's or the operator's.

    A reviewer's run resumes a thread with ``command.resume`` and nothing else; a client's
    runs carry input (or nothing) on its own threads, never a ``command`` nor a checkpoint to
    start from; the operator runs anything but a decision.
    """
    roles = _roles(ctx)
    command, has_input, rewinds = _run_parts(value)
    decides = "resume" in command
    steers = bool(set(command) - {"resume"})
    if decides and "reviewer" in roles:
        if steers or has_input or rewinds or not value.get("thread_id"):
            _refuse(ctx, "send anything with a decision but the decision itself")
        return None
    if decides:
        _refuse(ctx, "decide reviews (a reviewer's key does)")
    if "operator" in roles:
        if (steers or rewinds or has_input) and value.get("thread_id"):
            await refuse_review_rewrite(
                value["thread_id"], None, steers=steers, rewinds=rewinds, new_input=has_input
            )
        return None
    if "client" in roles:
        if steers:
            _refuse(ctx, "steer a run with a command")
        if rewinds:
            _refuse(ctx, "run a thread from an earlier checkpoint")
        if has_input and value.get("thread_id"):
            await refuse_review_rewrite(
                value["thread_id"], ctx.user.identity, steers=False, rewinds=False, new_input=True
            )
        return _own(ctx, value)
    _refuse(ctx, "start runs")


@auth.on.assistants.create
async def create_assistant(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A client creates assistants of its own settings (``bench --server`` does); a reviewer none.

    Changing and deleting assistants stays the operator's.
    """
    roles = _roles(ctx)
    if "operator" in roles:
        return None
    if "client" in roles:
        return _own(ctx, value)
    _refuse(ctx, "create assistants")


@auth.on.assistants.read
async def read_assistant(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every principal reads the assistants (the methods it may run)."""
    if not _roles(ctx):
        _refuse(ctx, "read assistants")


@auth.on.assistants.search
async def search_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every principal lists the assistants."""
    if not _roles(ctx):
        _refuse(ctx, "list assistants")
