"""Anchor handles: short signed capabilities naming one block of one note.

An agent addresses blocks in a proposal by handle, never by text offset. A
handle is minted by ``fastpad_fetch`` (``with_handles: true``) and binds:

- the caller's **session** and **token** — a handle pasted into someone else's
  transcript is inert for them;
- one **note** — it can only ever address the note it came from;
- one **block** (carried, so the server learns which block it names);
- the note's **frontier at read time** (carried as a 16-byte SHA-256 digest, so
  the handle stays short however many peers the frontier names);
- an **expiry** (five minutes by default).

Wire format (≈73 characters)::

    "h1." + base64url_unpadded( expires(4, big-endian unix seconds)
                               | block_id(16, ULID bytes)
                               | frontier_digest(16)
                               | tag(16) )

``tag`` is HMAC-SHA256, truncated to 128 bits, keyed with a key derived from the
server secret for this purpose only, over the version, the payload and the
length-prefixed session id, token id and note id. Those three are *not* carried:
the verifier supplies the caller's own values, so a handle presented by another
session or token, or for another note, simply fails the MAC. That is what makes
it inert rather than "valid but not yours": a foreign handle, a tampered one, a
malformed one and one whose token was revoked are all refused identically —
``out-of-scope`` (403) naming the field — so the refusal is no oracle. We use
``out-of-scope`` because, of the spec's error table, it is the one meaning "this
credential cannot reach that"; a handle is a capability this caller does not
hold. Its ``next_call`` says to re-fetch with handles, not to ask for a token.

Order of checks: shape → MAC (constant time) → revocation → expiry. An expired
handle that is genuinely the caller's gives ``handle-expired``; the expiry is
never reported for a handle that fails the MAC.

The frontier is checked by the caller against the note as it stands now
(:func:`handle_frontier_matches` / :func:`require_current_frontier`): a mismatch
is ``stale-frontier``, refused rather than applied blind.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ulid import ULID

from fastpad.errors import FieldError, HandleExpired, OutOfScope, StaleFrontier
from fastpad.security.sealed import SealedFormat

PREFIX = "h1."
HANDLE_TTL = timedelta(minutes=5)
# Anything longer is not one of ours; refuse before decoding.
MAX_HANDLE_CHARS = 128

_DIGEST_BYTES = 16
_PAYLOAD = struct.Struct(">I16s16s")  # expires, block id, frontier digest
_FORMAT = SealedFormat(PREFIX, b"fastpad/anchor-handle/v1", _PAYLOAD, MAX_HANDLE_CHARS)
_REFETCH = "fastpad_fetch with with_handles: true, then propose again with the new handles"


@dataclass(frozen=True)
class HandleClaims:
    """What a verified handle says. ``session_id``/``token_id``/``note_id`` are the caller's
    own (the MAC proved the handle was minted for exactly them)."""

    session_id: str
    token_id: str
    note_id: str
    block_id: str
    frontier_digest: bytes
    expires_at: datetime


def mint_handle(
    secret: bytes,
    *,
    session_id: str,
    token_id: str,
    note_id: str,
    block_id: str,
    frontier: str,
    now: datetime,
    ttl: timedelta = HANDLE_TTL,
) -> str:
    """A handle for ``block_id`` of ``note_id`` as read at ``frontier`` by this session and token."""
    expires = int(_epoch(now) + ttl.total_seconds())
    if not 0 < expires < 2**32:
        raise ValueError("handle expiry out of range")
    try:
        block_bytes = bytes(ULID.from_str(block_id))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"block id {block_id!r} is not a ULID") from exc
    payload = _PAYLOAD.pack(expires, block_bytes, frontier_digest(frontier))
    return _FORMAT.seal(secret, payload, session_id, token_id, note_id)


def open_handle(
    secret: bytes,
    handle: object,
    *,
    session_id: str,
    token_id: str,
    note_id: str,
    now: datetime,
    is_token_revoked: Callable[[str], bool],
    field: str = "handle",
) -> HandleClaims:
    """Verify ``handle`` for this caller and note. Raises ``OutOfScope`` (inert: foreign,
    tampered, malformed or revoked) or ``HandleExpired``. The frontier is the caller's to check."""
    opened = _FORMAT.open(secret, handle, session_id, token_id, note_id)
    if opened is None:
        raise _inert(field)
    if is_token_revoked(token_id):
        raise _inert(field)
    expires, block_bytes, digest = opened
    if _epoch(now) >= expires:
        raise HandleExpired(
            detail="This anchor handle has expired (handles are valid for five minutes). "
            "Re-fetch the note with with_handles: true and use the new handles.",
            field_errors=[FieldError(field, "handle_expired", "The handle has expired.")],
            extra={"expired_at": _iso(expires)},
            next_call=_REFETCH,
        )
    return HandleClaims(
        session_id=session_id,
        token_id=token_id,
        note_id=note_id,
        block_id=str(ULID.from_bytes(block_bytes)),
        frontier_digest=digest,
        expires_at=datetime.fromtimestamp(expires, timezone.utc),
    )


def frontier_digest(frontier: str) -> bytes:
    """The 16-byte digest a handle carries for a frontier string."""
    if not isinstance(frontier, str):
        raise TypeError("frontier must be a string")
    return hashlib.sha256(b"fastpad/frontier\x00" + frontier.encode("utf-8")).digest()[:_DIGEST_BYTES]


def handle_frontier_matches(claims: HandleClaims, current_frontier: str) -> bool:
    """Whether the note is still at the version the handle was read at."""
    return hmac.compare_digest(claims.frontier_digest, frontier_digest(current_frontier))


def require_current_frontier(claims: HandleClaims, current_frontier: str, *, field: str = "handle") -> None:
    """``StaleFrontier`` when the note moved since the handle was read."""
    if not handle_frontier_matches(claims, current_frontier):
        raise StaleFrontier(
            detail="The note changed since this handle was read, so the edit was refused rather "
            "than applied blind. Re-read the note, recompute, and propose again.",
            field_errors=[FieldError(field, "stale_frontier", "The note moved since this handle was minted.")],
            extra={"current_frontier": current_frontier},
            next_call=_REFETCH,
        )


# -- internals ---------------------------------------------------------------------------


def _inert(field: str) -> OutOfScope:
    message = "This handle is not a capability this session holds for this note."
    return OutOfScope(
        detail=f"{message} Handles are bound to the session, token and note they were fetched for, "
        "and die with their token. Re-fetch the note with with_handles: true.",
        field_errors=[FieldError(field, "invalid_handle", message)],
        next_call=_REFETCH,
    )


def _epoch(now: datetime) -> float:
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValueError("now must be a timezone-aware datetime")
    return now.timestamp()


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()
