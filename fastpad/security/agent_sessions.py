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

import base64
import binascii
import hashlib
import hmac
import secrets
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from fastpad.errors import FieldError, ValidationFailed

PREFIX = "as1."
SESSION_TTL = timedelta(hours=12)
MIN_SECRET_BYTES = 32
MAX_SESSION_CHARS = 96

_VERSION = b"as1"
_PAYLOAD = struct.Struct(">I12s")  # expires, nonce
_TAG_BYTES = 16
_RAW_BYTES = _PAYLOAD.size + _TAG_BYTES
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
    payload = _PAYLOAD.pack(expires, secrets.token_bytes(12))
    tag = _tag(_key(secret), payload, workspace_id, credential)
    session_id = PREFIX + base64.urlsafe_b64encode(payload + tag).rstrip(b"=").decode("ascii")
    return SessionClaims(session_id, datetime.fromtimestamp(expires, timezone.utc))


def open_session(
    secret: bytes, session_id: object, *, workspace_id: str, credential: str, now: datetime, field: str = "session"
) -> SessionClaims:
    """Verify ``session_id`` for this credential and workspace, or ``validation-failed``."""
    raw = _decode(session_id)
    if raw is None:
        raise _refused(field, "invalid_session", "This is not a session this credential holds.")
    payload, tag = raw[: _PAYLOAD.size], raw[_PAYLOAD.size :]
    if not hmac.compare_digest(tag, _tag(_key(secret), payload, workspace_id, credential)):
        raise _refused(field, "invalid_session", "This is not a session this credential holds.")
    expires, _nonce = _PAYLOAD.unpack(payload)
    if _epoch(now) >= expires:
        raise _refused(field, "session_expired", "The session has expired.")
    assert isinstance(session_id, str)
    return SessionClaims(session_id, datetime.fromtimestamp(expires, timezone.utc))


# -- internals ---------------------------------------------------------------------------


def _key(secret: bytes) -> bytes:
    if not isinstance(secret, (bytes, bytearray)) or len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the session secret must be at least {MIN_SECRET_BYTES} bytes")
    return hmac.new(bytes(secret), b"fastpad/agent-session/v1", hashlib.sha256).digest()


def _tag(key: bytes, payload: bytes, workspace_id: str, credential: str) -> bytes:
    mac = hmac.new(key, _VERSION, hashlib.sha256)
    for part in (workspace_id, credential):
        encoded = str(part).encode("utf-8")
        mac.update(struct.pack(">I", len(encoded)))
        mac.update(encoded)
    mac.update(payload)
    return mac.digest()[:_TAG_BYTES]


def _decode(session_id: object) -> bytes | None:
    if not isinstance(session_id, str) or len(session_id) > MAX_SESSION_CHARS or not session_id.startswith(PREFIX):
        return None
    body = session_id[len(PREFIX) :]
    if not body.isascii() or "=" in body:
        return None
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None
    # One spelling per session: refuse non-canonical base64.
    if len(raw) != _RAW_BYTES or base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != body:
        return None
    return raw


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
