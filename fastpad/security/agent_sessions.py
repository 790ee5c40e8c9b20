"""Agent sessions: the signed, expiring session id ``fastpad_capabilities`` hands out.

MCP is stateless, so a session is not a server-side row: it is a short string
the server can verify on its own, bound to one workspace and one credential
(``Principal.key``: ``token:<id>``, or ``person:<id>`` for a signed-in person).
Anchor handles and the copy guard's read log hang off it.

Wire format (≈47 characters)::

    "as1." + base64url_unpadded( expires(4, big-endian unix seconds)
                                | nonce(12, random)
                                | tag(16) )

``tag`` is HMAC-SHA256 (truncated to 128 bits) under a key derived from the
server secret for this purpose only, over the version, the payload and the
length-prefixed workspace id and credential key. Neither is carried: the
verifier supplies the caller's own, so a session id presented by another
credential fails the MAC exactly like a forged or malformed one. Every refusal
is ``validation-failed`` naming the ``session`` field, with ``next_call`` saying
to call ``fastpad_capabilities`` for a new one; an expired session says so.

The credential itself is checked by whoever authenticated the caller (a revoked
token never becomes a ``Principal``), so a session dies with its token.
"""

from __future__ import annotations

import secrets
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from fastpad.errors import FieldError, ValidationFailed
from fastpad.security.sealed import SealedFormat

PREFIX = "as1."
SESSION_TTL = timedelta(hours=12)
MAX_SESSION_CHARS = 96

_PAYLOAD = struct.Struct(">I12s")  # expires, nonce
_FORMAT = SealedFormat(PREFIX, b"fastpad/agent-session/v1", _PAYLOAD, MAX_SESSION_CHARS)
_RENEW = "fastpad_capabilities, then use the session it returns"


@dataclass(frozen=True)
class SessionClaims:
    session_id: str
    expires_at: datetime


def mint_session(
    secret: bytes, *, workspace_id: str, credential: str, now: datetime, ttl: timedelta = SESSION_TTL
) -> SessionClaims:
    """A new session for ``credential`` acting in ``workspace_id``."""
    expires = int(_epoch(now) + ttl.total_seconds())
    if not 0 < expires < 2**32:
        raise ValueError("session expiry out of range")
    session_id = _FORMAT.seal(secret, _PAYLOAD.pack(expires, secrets.token_bytes(12)), workspace_id, credential)
    return SessionClaims(session_id, datetime.fromtimestamp(expires, timezone.utc))


def open_session(
    secret: bytes, session_id: object, *, workspace_id: str, credential: str, now: datetime, field: str = "session"
) -> SessionClaims:
    """Verify ``session_id`` for this credential and workspace, or ``validation-failed``."""
    opened = _FORMAT.open(secret, session_id, workspace_id, credential)
    if opened is None:
        raise _refused(field, "invalid_session", "This is not a session this credential holds.")
    expires, _nonce = opened
    if _epoch(now) >= expires:
        raise _refused(field, "session_expired", "The session has expired.")
    assert isinstance(session_id, str)
    return SessionClaims(session_id, datetime.fromtimestamp(expires, timezone.utc))


# -- internals ---------------------------------------------------------------------------


def _refused(field: str, code: str, message: str) -> ValidationFailed:
    return ValidationFailed(
        detail=f"{message} Sessions come from fastpad_capabilities and are bound to the credential "
        "that opened them.",
        field_errors=[FieldError(field, code, message)],
        next_call=_RENEW,
    )


def _epoch(now: datetime) -> float:
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValueError("now must be a timezone-aware datetime")
    return now.timestamp()
