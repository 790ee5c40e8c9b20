"""``fp login``: the OAuth device authorization flow (RFC 8628), so a terminal never holds a password.

1. The terminal starts a login (:meth:`DeviceLoginService.start`) and gets a
   secret *device code* plus a short *user code* to show its person.
2. A signed-in person opens the approval page, types the user code, reads what
   is being asked for (:meth:`pending`) and approves or denies it (:meth:`decide`).
   The workspace is the approving session's, never the terminal's to choose.
3. The terminal polls (:meth:`poll`) no faster than the interval; once approved,
   the first poll receives a person CLI token (``TokenService``) carrying the
   scopes the page named, and the request is spent.

Only the SHA-256 of a device code is stored. The user code is 8 letters from
RFC 8628's 20 consonants (~34 bits): short to type, and guessing one needs a
signed-in session, a live request and the page's rate limit. ``turns:accept``
is granted only when the terminal asks for it by name, and the page says so.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from fastpad.errors import (
    AccessDenied,
    AuthorizationPending,
    ExpiredToken,
    FastpadError,
    FieldError,
    InvalidGrant,
    NotFound,
    PolicyDenied,
    SlowDown,
    ValidationFailed,
)
from fastpad.security.principals import Principal
from fastpad.security.scopes import ALL_SCOPES, SESSION_SCOPES, TURNS_ACCEPT, ordered, parse_scopes
from fastpad.security.tokens import TokenInfo, TokenService
from fastpad.store import Store, utcnow
from fastpad.store.device import DeviceRow, device_transaction

REQUEST_TTL = timedelta(minutes=10)
POLL_INTERVAL_S = 5
SLOW_DOWN_STEP_S = 5  # RFC 8628 §3.5: every slow_down adds 5 seconds to the interval
CLI_TOKEN_LIFETIME = timedelta(days=90)
SWEEP_AFTER = timedelta(days=1)  # requests are deleted this long after they expired
# What a plain `fp login` asks for: a person's own grant. turns:accept is never in it.
DEFAULT_SCOPES: tuple[str, ...] = tuple(ordered(SESSION_SCOPES))
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
USER_CODE_LENGTH = 8
MAX_CLIENT_NAME = 100
_DEVICE_CODE_PREFIX = "fpd_"

# What each scope lets the terminal do, as the approval page says it (spec › Agents › What a token can reach).
SCOPE_GRANTS: dict[str, str] = {
    "notes:read": "read your notes",
    "notes:propose": "propose changes for you to review",
    "notes:write": "write to your notes directly",
    "notes:delete": "move notes to the trash and restore them",
    "search:read": "search your notes",
    "graph:read": "follow links between notes",
    "schema:write": "define note types and their properties",
    "export": "pull the whole workspace as Markdown",
    "turns:accept": "accept its own proposals — each accept is listed on the Agent activity page for you to review or revert",
}
assert set(SCOPE_GRANTS) == set(ALL_SCOPES)


@dataclass(frozen=True)
class DeviceStart:
    device_code: str  # the secret the terminal polls with; exists only in this value
    user_code: str  # as shown: XXXX-XXXX
    expires_in: int  # seconds
    interval: int  # seconds between polls


@dataclass(frozen=True)
class DeviceRequest:
    """A login request as the approval page shows it."""

    user_code: str  # as shown: XXXX-XXXX
    client_name: str
    scopes: tuple[str, ...]
    expires_at: datetime
    state: str  # pending | approved | denied

    @property
    def grants_accept(self) -> bool:
        return TURNS_ACCEPT in self.scopes


@dataclass(frozen=True)
class IssuedCredential:
    token: str  # the plaintext, handed to the terminal once
    info: TokenInfo
    workspace_id: str


def hash_device_code(device_code: str) -> str:
    return hashlib.sha256(device_code.encode("utf-8")).hexdigest()


def normalize_user_code(text: str) -> str | None:
    """What a person typed (any case, with or without the dash or spaces) → the stored form, or None."""
    if not isinstance(text, str) or len(text) > 32:
        return None
    letters = "".join(ch for ch in text.upper() if ch not in "- \t")
    if len(letters) != USER_CODE_LENGTH or any(ch not in USER_CODE_ALPHABET for ch in letters):
        return None
    return letters


def display_user_code(code: str) -> str:
    half = USER_CODE_LENGTH // 2
    return f"{code[:half]}-{code[half:]}"


class DeviceLoginService:
    def __init__(
        self,
        store: Store,
        tokens: TokenService,
        *,
        clock: Callable[[], datetime] = utcnow,
        interval_s: int = POLL_INTERVAL_S,
        ttl: timedelta = REQUEST_TTL,
    ) -> None:
        self.store = store
        self.tokens = tokens
        self.clock = clock
        self.interval_s = interval_s
        self.ttl = ttl

    # ------------------------------------------------------------------ the terminal

    def start(self, *, scopes: Iterable[str] | str | None = None, client_name: str = "") -> DeviceStart:
        """A new login request. ``scopes`` default to a person's own grant (never ``turns:accept``)."""
        wanted = DEFAULT_SCOPES if scopes is None else tuple(ordered(parse_scopes(scopes, field="scope")))
        if not isinstance(client_name, str) or len(client_name) > MAX_CLIENT_NAME or not client_name.isprintable():
            raise ValidationFailed(
                detail="client_name is at most 100 printable characters",
                field_errors=[FieldError("client_name", "invalid", f"at most {MAX_CLIENT_NAME} printable characters")],
            )
        now = self.clock()
        device_code = _DEVICE_CODE_PREFIX + secrets.token_urlsafe(32)
        digest = hash_device_code(device_code)
        for _ in range(5):  # a user code already taken is astronomically rare; draw again
            user_code = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(USER_CODE_LENGTH))
            row = DeviceRow(
                device_code_hash=digest, user_code=user_code, client_name=client_name.strip(), scopes=wanted,
                interval_s=self.interval_s, created_at=now, expires_at=now + self.ttl, last_polled_at=None,
                approver_workspace_id=None, approver_id=None, approved=None, decided_at=None, consumed_at=None, token_id=None,
            )
            try:
                with device_transaction(self.store, write=True, device_code_hash=digest, user_code=user_code,
                                        expired_before=now - SWEEP_AFTER) as devices:
                    devices.sweep()
                    devices.insert(row)
            except self.store.integrity_errors:
                continue
            return DeviceStart(device_code, display_user_code(user_code), int(self.ttl.total_seconds()),
                               self.interval_s)
        raise FastpadError(detail="could not allocate a user code; try again")

    def poll(self, device_code: str) -> IssuedCredential:
        """The credential, once a person approved; otherwise the RFC 8628 error that says why not."""
        if not isinstance(device_code, str) or not device_code.startswith(_DEVICE_CODE_PREFIX) or len(device_code) > 100:
            raise InvalidGrant(detail="not a device code this server issued")
        digest = hash_device_code(device_code)
        now = self.clock()
        with device_transaction(self.store, write=True, device_code_hash=digest) as devices:
            row = devices.by_device_code(digest)
            outcome = _poll_outcome(row, now)
            if row is not None and outcome is not _EXPIRED_OR_USED:
                interval = row.interval_s + (SLOW_DOWN_STEP_S if outcome is _TOO_SOON else 0)
                devices.polled(digest, at=now, interval_s=interval)
                if outcome is _APPROVED:
                    devices.consume(digest, at=now)
        # Raised after the commit: the poll's time (and a grown interval) must stick.
        if row is None:
            raise InvalidGrant(detail="not a device code this server issued")
        if outcome is _EXPIRED_OR_USED:
            if row.consumed_at is not None:
                raise InvalidGrant(detail="this login already received its credential")
            raise ExpiredToken(detail="the login request expired before it was approved",
                               next_call="start again: fp login")
        if outcome is _TOO_SOON:
            interval = row.interval_s + SLOW_DOWN_STEP_S
            raise SlowDown(detail=f"poll at most every {interval} seconds", extra={"interval": interval})
        if outcome is _PENDING:
            raise AuthorizationPending(detail="nobody has approved this login yet",
                                       extra={"interval": row.interval_s})
        if outcome is _DENIED:
            raise AccessDenied(detail="the person denied this login")
        return self._issue(row, digest)

    def _issue(self, row: DeviceRow, digest: str) -> IssuedCredential:
        workspace_id, person_id = row.approver_workspace_id, row.approver_id
        assert workspace_id is not None and person_id is not None
        with self.store.read(workspace_id) as tx:
            person = tx.person(person_id)
        if person is None:
            raise AccessDenied(detail="the person who approved this login is no longer a member")
        plaintext, info = self.tokens.create(
            workspace_id, scopes=row.scopes, person_email=person.email, expires_in=CLI_TOKEN_LIFETIME,
            label=f"fp login: {row.client_name}" if row.client_name else "fp login",
            minted_by=Principal.person(workspace_id, person_id),
        )
        with device_transaction(self.store, write=True, device_code_hash=digest) as devices:
            devices.set_token(digest, info.id)
        return IssuedCredential(plaintext, info, workspace_id)

    # ------------------------------------------------------------------ the approving person

    def pending(self, user_code: str) -> DeviceRequest:
        """The request a user code names, for the approval page. NotFound when it is unknown,
        expired or already used — indistinguishable on purpose."""
        code = _user_code_or_not_found(user_code)
        with device_transaction(self.store, write=False, user_code=code) as devices:
            row = devices.by_user_code(code)
        if row is None or row.expires_at <= self.clock() or row.consumed_at is not None:
            raise _no_request()
        return _request(row)

    def decide(self, principal: Principal, user_code: str, *, approve: bool) -> DeviceRequest:
        """Approve or deny a pending request from a signed-in web session; the credential
        will act in that session's workspace, for that person."""
        if not principal.is_person or principal.token_id is not None:
            raise PolicyDenied(detail="a login is approved from a signed-in browser session, not with a token",
                               extra={"reason": "session_only"})
        code = _user_code_or_not_found(user_code)
        now = self.clock()
        with device_transaction(self.store, write=True, user_code=code) as devices:
            if not devices.decide(code, workspace_id=principal.workspace_id, person_id=principal.principal_id,
                                  approved=approve, at=now):
                raise _no_request()
            row = devices.by_user_code(code)
        assert row is not None
        return _request(row)


# The outcomes of one poll, decided inside its transaction.
_EXPIRED_OR_USED, _TOO_SOON, _PENDING, _DENIED, _APPROVED = (object() for _ in range(5))


def _poll_outcome(row: DeviceRow | None, now: datetime) -> object:
    if row is None or row.consumed_at is not None or row.expires_at <= now:
        return _EXPIRED_OR_USED
    if row.last_polled_at is not None and now - row.last_polled_at < timedelta(seconds=row.interval_s):
        return _TOO_SOON
    if row.approved is None:
        return _PENDING
    return _APPROVED if row.approved else _DENIED


def _request(row: DeviceRow) -> DeviceRequest:
    state = "pending" if row.approved is None else ("approved" if row.approved else "denied")
    return DeviceRequest(display_user_code(row.user_code), row.client_name, tuple(row.scopes), row.expires_at, state)


def _user_code_or_not_found(user_code: str) -> str:
    code = normalize_user_code(user_code)
    if code is None:
        raise ValidationFailed(
            detail="a code looks like BCDF-GHJK: 8 letters",
            field_errors=[FieldError("user_code", "invalid", "8 letters from the code your terminal shows")],
        )
    return code


def _no_request() -> NotFound:
    return NotFound(detail="no pending login has that code; it may have expired — run fp login again")
