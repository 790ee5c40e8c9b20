"""Who is calling: a bearer token or the web session cookie → a Principal.

* ``Authorization: Bearer fpk_live_…`` → ``TokenService.authenticate``.
* otherwise the session cookie → ``PeopleService.session_principal``; a
  cookie-authenticated mutation must also carry ``x-csrf-token``.
* no credential → 401 with ``WWW-Authenticate: Bearer resource_metadata=…``.

The workspace is the credential's. ``x-fastpad-workspace`` only *names*
one: naming any other workspace makes the request act nowhere, so reads
return nothing and writes find nothing (see :attr:`Caller.elsewhere`).
Every authenticated request then counts against the principal's rate limit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.types import Scope

from fastpad.errors import FieldError, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.ids import is_ulid

TOKEN_PREFIX = "fpk_live_"
SESSION_COOKIE = "fastpad_session"
CSRF_HEADER = "x-csrf-token"
WORKSPACE_HEADER = "x-fastpad-workspace"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Caller:
    principal: Any  # fastpad.security.principals.Principal
    via: str  # "token" | "session"
    session_id: str | None
    elsewhere: bool  # x-fastpad-workspace names a workspace this caller is not a member of

    @property
    def idempotency_principal(self) -> str:
        """Whose idempotency records a request reads and writes: the principal *and* the
        credential it came with (the token, or a digest of the session), *and* what that
        credential may reach (its scopes and note set). A replay returns the first response
        verbatim, so a record must only ever answer a request that was allowed to make it:
        the same person's note-scoped or read-only token replaying another token's key and body
        finds nothing, and runs — and is checked — as a request of its own."""
        principal = self.principal
        credential = (f"token:{principal.token_id}" if self.via == "token"
                      else f"session:{_digest(self.session_id or '')}")
        reach = _digest(" ".join(sorted(principal.scopes)) + "|"
                        + ("*" if principal.note_ids is None else " ".join(sorted(principal.note_ids))))
        return f"{principal.kind}:{principal.principal_id}/{credential}/{reach}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def carries_credential(scope: Scope) -> bool:
    """Cheap pre-check for the body limiter: does the request present any credential?"""
    for name, value in scope.get("headers", ()):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return True
        if name == b"cookie" and SESSION_COOKIE.encode() + b"=" in value:
            return True
    return False


def _unauthenticated(detail: str, *, rejected: bool) -> Unauthenticated:
    return Unauthenticated(detail=detail, extra={"credential_rejected": True} if rejected else {})


def authenticate(request: Request) -> Caller:
    """FastAPI dependency (sync: token and session checks touch the database)."""
    state = request.app.state
    deployment = state.deployment
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise _unauthenticated("Authorization must be 'Bearer fpk_live_…'", rejected=True)
        try:
            principal = deployment.tokens.authenticate(token)
        except Unauthenticated as exc:
            exc.extra.setdefault("credential_rejected", True)
            raise
        caller = Caller(principal, "token", None, False)
    else:
        session_id = request.cookies.get(SESSION_COOKIE)
        if not session_id:
            raise _unauthenticated(
                "This route needs a credential: Authorization: Bearer fpk_live_…, or a signed-in session.",
                rejected=False,
            )
        principal = deployment.people.session_principal(session_id)
        if request.method not in SAFE_METHODS:
            _check_csrf(request, deployment, session_id)
        caller = Caller(principal, "session", session_id, False)

    state.rate_limiter.hit(principal.rate_key, state.limits.rate_for(principal))
    named = request.headers.get(WORKSPACE_HEADER)
    if named is not None:
        named = named.strip()
        if not is_ulid(named):
            raise ValidationFailed(
                detail=f"{WORKSPACE_HEADER} must be a workspace ULID",
                field_errors=[FieldError(f"header.{WORKSPACE_HEADER}", "ulid", "must be a ULID")],
            )
        if named != principal.workspace_id:
            caller = _act_in(caller, named, deployment)
    request.state.caller = caller
    return caller


def _act_in(caller: Caller, workspace_id: str, deployment: Any) -> Caller:
    """The caller acting in another named workspace.

    A signed-in person who is a member there acts there; anyone else gets a
    principal that sees nothing there, and the routes answer "nothing"
    (an empty list, 404) without calling a service at all.
    """
    if caller.via == "session":
        principal = deployment.people.switch_workspace(caller.principal, workspace_id)
    else:
        principal = caller.principal.sees_nothing_in(workspace_id)
    return Caller(principal, caller.via, caller.session_id, principal.elsewhere)


def _check_csrf(request: Request, deployment: Any, session_id: str) -> None:
    sent = request.headers.get(CSRF_HEADER, "")
    if not sent or not deployment.people.check_csrf(session_id, sent):
        raise PolicyDenied(
            detail=f"A cookie-authenticated mutation must carry the session's CSRF token in {CSRF_HEADER}.",
            extra={"reason": "csrf"},
            next_call=f"send {CSRF_HEADER} with the csrf_token POST /v1/session returned",
        )


