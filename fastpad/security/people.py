"""People: members of workspaces who sign in with a password and hold web sessions.

Passwords are hashed with argon2id (argon2-cffi's defaults). A web session is
a random cookie value of which only the SHA-256 is stored; its CSRF token is
an HMAC of the session id under the deployment's secret, so it needs no
storage and cannot be forged without the secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from fastpad.errors import Conflict, FieldError, NotFound, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.ids import new_id
from fastpad.security.audit import ANONYMOUS, MEMBER_REMOVED, SIGN_IN, SIGN_IN_FAILED, record
from fastpad.security.principals import Principal
from fastpad.security.scopes import SESSION_SCOPES
from fastpad.store import MemberRow, PersonRow, SessionRow, Store, WorkspaceRow, utcnow

SESSION_TTL = timedelta(days=14)
SESSION_TOUCH_GRANULARITY = timedelta(minutes=5)
MIN_PASSWORD = 8
MAX_PASSWORD = 1024
ROLES = ("owner", "admin", "member", "viewer")
MANAGERS = ("owner", "admin")  # who invites, changes roles and removes people
MAX_USER_AGENT = 300
MAX_DISPLAY_NAME = 200
_SESSION_PREFIX = "fps_"


@dataclass(frozen=True)
class PersonInfo:
    id: str
    email: str
    display_name: str
    role: str
    workspace_id: str
    created_at: datetime

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "email": self.email, "display_name": self.display_name, "role": self.role,
                "workspace_id": self.workspace_id, "created_at": self.created_at.isoformat()}


@dataclass(frozen=True)
class RemovedMember:
    person_id: str
    sessions_ended: int
    tokens_revoked: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"person_id": self.person_id, "sessions_ended": self.sessions_ended,
                "tokens_revoked": list(self.tokens_revoked)}


def normalize_email(email: str) -> str:
    if not isinstance(email, str) or "@" not in email.strip() or len(email) > 320:
        raise ValidationFailed(detail="not an email address",
                               field_errors=[FieldError("email", "email", "an email address, like ada@example.com")])
    return email.strip().lower()


def check_password(password: str, email: str, *, field: str = "password") -> None:
    """A password of MIN_PASSWORD to MAX_PASSWORD characters that neither holds the account's email nor is
    mostly its part before the @: the first guesses anyone tries."""
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise ValidationFailed(
            detail=f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters",
            field_errors=[FieldError(field, "length", f"{MIN_PASSWORD} to {MAX_PASSWORD} characters")],
        )
    lowered, local_part = password.lower(), email.lower().partition("@")[0]
    # The name before the @ may appear in a longer passphrase, not make up half of it.
    mostly_the_name = len(local_part) >= 3 and local_part in lowered and len(local_part) * 2 >= len(lowered)
    if email.lower() in lowered or mostly_the_name:
        raise ValidationFailed(
            detail="a password must not contain the account's email address",
            field_errors=[FieldError(field, "contains_email", "choose a password that does not hold your email")],
        )


def check_display_name(display_name: str) -> str:
    if not isinstance(display_name, str) or not display_name.strip() or len(display_name) > MAX_DISPLAY_NAME:
        raise ValidationFailed(detail=f"a display name has 1 to {MAX_DISPLAY_NAME} characters", field_errors=[
            FieldError("display_name", "length", f"1 to {MAX_DISPLAY_NAME} characters")])
    return display_name.strip()


def check_role(role: str, *, field: str = "role", allowed: tuple[str, ...] = ROLES) -> str:
    if role not in allowed:
        raise ValidationFailed(detail=f"role is one of {', '.join(allowed)}",
                               field_errors=[FieldError(field, "enum", f"one of {', '.join(allowed)}")])
    return role


class PeopleService:
    def __init__(
        self,
        store: Store,
        secret: bytes,
        *,
        hasher: PasswordHasher | None = None,
        clock: Callable[[], datetime] = utcnow,
        session_ttl: timedelta = SESSION_TTL,
    ) -> None:
        if not secret:
            raise ValueError("PeopleService needs the deployment secret")
        self.store = store
        self._secret = secret
        self.hasher = hasher or PasswordHasher()  # argon2id
        self.clock = clock
        self.session_ttl = session_ttl
        self._dummy_hash: str | None = None

    @property
    def session_max_age_s(self) -> int:
        """Cookie Max-Age matching the server-side session lifetime."""
        return int(self.session_ttl.total_seconds())

    # ------------------------------------------------------------------ people

    def create_person(
        self,
        workspace_id: str,
        email: str,
        *,
        password: str | None = None,
        role: str = "member",
        display_name: str = "",
    ) -> PersonInfo:
        """Add a member to a workspace, creating the person if the email is new.
        A person who already exists elsewhere keeps their password."""
        email = normalize_email(email)
        check_role(role)
        if password is not None:
            check_password(password, email)
        try:
            return self._add_person(workspace_id, email, password, role, display_name)
        except self.store.integrity_errors:
            # Someone added the same email at the same moment.
            raise Conflict(detail=f"{email} was just added; try again") from None

    def _add_person(self, workspace_id: str, email: str, password: str | None, role: str,
                    display_name: str) -> PersonInfo:
        now = self.clock()
        existing = self.store.login_lookup(email)
        # Hash before taking the write transaction: argon2 is deliberately slow.
        password_hash = self.hasher.hash(password) if password is not None and existing is None else None
        with self.store.write(workspace_id) as tx:
            if tx.workspace() is None:
                raise NotFound(detail=f"workspace {workspace_id} not found")
            if existing is None:
                person_id = new_id()
                tx.insert_person(PersonRow(
                    id=person_id, email=email, display_name=display_name,
                    password_hash=password_hash, created_at=now,
                ))
            else:
                person_id = existing[0]
                if tx.member(person_id) is not None:
                    raise Conflict(detail=f"{email} is already a member of this workspace")
            tx.add_member(person_id, role, now)
            person = tx.person(person_id)
        assert person is not None
        return PersonInfo(person.id, person.email, person.display_name, role, workspace_id, person.created_at)

    def set_password(self, workspace_id: str, person_id: str, password: str) -> int:
        """A new password (an operator's reset: the old one was forgotten or seen). It signs the
        person out everywhere: every web session they hold, in every workspace, ends, so a
        session someone else took with the old password goes with it. CLI tokens are
        credentials of their own and stay (revoke them one by one). Returns how many ended."""
        with self.store.read(workspace_id) as tx:
            person = tx.person(person_id)
        if person is None:
            raise NotFound(detail=f"person {person_id} not found")
        check_password(password, person.email)
        password_hash = self.hasher.hash(password)
        now = self.clock()
        with self.store.write(workspace_id) as tx:
            tx.set_password_hash(person_id, password_hash)
        ended = 0
        for workspace, _ in self.store.memberships(person_id):
            with self.store.write(workspace.id) as tx:
                ended += tx.end_sessions_of(person_id, now)
        return ended

    def remove_member(self, workspace_id: str, person_id: str, *, removed_by: Principal | None = None) -> RemovedMember:
        """Take a person out of a workspace, in one transaction: every web session they hold there
        ends, and every token that answers to them there is revoked with all delegated from it —
        their CLI tokens, and agent tokens they minted or that were delegated from their login
        (what ``fp mcp`` holds). Their notes and history stay, attributed to them. The removal's
        audit entry (by ``removed_by``; None: the operator) commits with it."""
        now = self.clock()
        with self.store.write(workspace_id) as tx:
            if tx.member(person_id) is None:
                raise NotFound(detail=f"person {person_id} is not a member")
            sessions = tx.end_sessions_of(person_id, now)
            revoked: set[str] = set()
            for token_id in tx.team.tokens_answering_to(person_id):
                revoked.update(tx.revoke_token_tree(token_id, now))
            role = tx.member(person_id).role
            tx.remove_member(person_id)
            record(tx, removed_by, MEMBER_REMOVED, target=person_id,
                   details={"role": role, "tokens_revoked": sorted(revoked)}, at=now)
        # A session kept in another of their workspaces may act here too (a tab names its
        # workspace on every request): it ends as well, so every tab open here says "Session
        # ended" at its next request instead of showing this workspace gone empty. Signing in
        # again opens a workspace they still belong to.
        for workspace, _ in self.store.memberships(person_id):
            with self.store.write(workspace.id) as tx:
                sessions += tx.end_sessions_of(person_id, now)
        return RemovedMember(person_id, sessions, tuple(sorted(revoked)))

    def members(self, workspace_id: str) -> list[PersonInfo]:
        with self.store.read(workspace_id) as tx:
            return [PersonInfo(p.id, p.email, p.display_name, role, workspace_id, p.created_at)
                    for p, role in tx.members()]

    def role(self, workspace_id: str, person_id: str) -> str | None:
        """The person's role in the workspace; None for someone who is not a member."""
        with self.store.read(workspace_id) as tx:
            member = tx.member(person_id)
        return member.role if member is not None else None

    def workspaces(self, person_id: str) -> list[dict[str, str]]:
        """The workspaces a person belongs to (for a switcher)."""
        return [{"id": w.id, "name": w.name, "role": role} for w, role in self.store.memberships(person_id)]

    # ------------------------------------------------------------------ your account

    def change_password(self, principal: Principal, current_password: str, new_password: str,
                        *, keep_session: str | None = None) -> int:
        """A signed-in person changes their own password, proving the current one. Every other web
        session they hold ends (a session someone took with the old password goes with it); the one
        named ``keep_session`` stays. Returns how many ended."""
        principal.require_signed_in("Changing your password", reads_only=True)
        person = self._yourself(principal)[0]
        try:
            self.hasher.verify(person.password_hash or "", current_password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            raise ValidationFailed(detail="the current password is wrong", field_errors=[
                FieldError("current_password", "wrong", "not your current password")]) from None
        check_password(new_password, person.email, field="new_password")
        password_hash = self.hasher.hash(new_password)
        now = self.clock()
        kept = _sha256(keep_session) if keep_session else None
        ended = 0
        for workspace, _ in self.store.memberships(person.id):
            with self.store.write(workspace.id) as tx:
                if workspace.id == principal.workspace_id:
                    tx.set_password_hash(person.id, password_hash)
                for session in tx.team.open_sessions_of(person.id, now):
                    if session.session_hash != kept:
                        ended += tx.team.end_session_of(person.id, session.id, now)
        return ended

    def set_display_name(self, principal: Principal, display_name: str) -> PersonInfo:
        principal.require_signed_in("Changing your display name", reads_only=True)
        name = check_display_name(display_name)
        self._yourself(principal)
        with self.store.write(principal.workspace_id) as tx:
            tx.team.set_display_name(principal.principal_id, name)
        return self.me(principal)

    def me(self, principal: Principal) -> PersonInfo:
        principal.require_signed_in("Your account", reads_only=True)
        person, member = self._yourself(principal)
        return PersonInfo(person.id, person.email, person.display_name, member.role, principal.workspace_id,
                          person.created_at)

    def _yourself(self, principal: Principal) -> tuple[PersonRow, MemberRow]:
        """The signed-in person and their membership where the principal acts; a session naming a
        workspace its person is not in finds no account there (nothing, as everywhere else there)."""
        with self.store.read(principal.workspace_id) as tx:
            person = tx.person(principal.principal_id)
            member = tx.member(principal.principal_id)
        if person is None or member is None:
            raise NotFound(detail="no account of yours in the named workspace")
        return person, member

    def sessions(self, principal: Principal, current_session: str | None) -> list[dict[str, object]]:
        """Where the person is signed in, in every workspace they belong to (a session lives in the
        workspace it acts in): browser, workspace, when it began and was last seen."""
        principal.require_signed_in("Listing your sessions", reads_only=True)
        current = _sha256(current_session) if current_session else None
        seen = []
        for workspace, _ in self.store.memberships(principal.principal_id):
            with self.store.read(workspace.id) as tx:
                seen += [(s, workspace) for s in tx.team.open_sessions_of(principal.principal_id, self.clock())]
        seen.sort(key=lambda pair: (pair[0].last_seen_at, pair[0].id), reverse=True)
        return [{"id": s.id, "user_agent": s.user_agent, "workspace_id": w.id, "workspace_name": w.name,
                 "created_at": s.created_at.isoformat(), "last_seen_at": s.last_seen_at.isoformat(),
                 "current": s.session_hash == current} for s, w in seen]

    def end_own_session(self, principal: Principal, session_id: str) -> None:
        """Sign one of your own sessions out, in whichever of your workspaces it is; another person's
        (or an unknown) session is a 404."""
        principal.require_signed_in("Signing a session out", reads_only=True)
        for workspace, _ in self.store.memberships(principal.principal_id):
            with self.store.write(workspace.id) as tx:
                if tx.team.end_session_of(principal.principal_id, session_id, self.clock()):
                    return
        raise NotFound(detail=f"no open session {session_id} of yours")

    # ------------------------------------------------------------------ principals

    def principal_for(self, workspace_id: str, person_id: str) -> Principal:
        """A member acting in a workspace with a person's full grant (web session / operator)."""
        with self.store.read(workspace_id) as tx:
            member = tx.member(person_id)
        if member is None:
            raise Unauthenticated(detail="not a member of this workspace")
        return Principal.person(workspace_id, person_id, scopes=SESSION_SCOPES, role=member.role)

    def switch_workspace(self, principal: Principal, workspace_id: str) -> Principal:
        """The same signed-in person acting in another workspace they belong to.
        A token is bound to its workspace, and a workspace the person is not in
        yields a principal that sees nothing there — never someone else's notes."""
        if workspace_id == principal.workspace_id:
            return principal
        if principal.is_person and principal.token_id is None:
            with self.store.read(workspace_id) as tx:
                member = tx.member(principal.principal_id)
            if member is not None:
                return Principal.person(workspace_id, principal.principal_id, scopes=SESSION_SCOPES, role=member.role)
        return principal.sees_nothing_in(workspace_id)

    def switch_session(self, session_id: str, workspace_id: str, *, user_agent: str = "") -> tuple[str, str]:
        """Move a web session into another workspace its person belongs to: a new session there
        (cookie value, CSRF token) and the old one ended, so the browser's current workspace — what
        every page and the device approval act in — is the new one. A workspace the person is not
        a member of (or one that does not exist) is a 404, the same for both."""
        principal = self.session_principal(session_id)
        if self.role(workspace_id, principal.principal_id) is None:
            raise NotFound(detail=f"no workspace {workspace_id} of yours", extra={"workspace_id": workspace_id})
        opened = self.create_session(self.principal_for(workspace_id, principal.principal_id), user_agent=user_agent)
        self.end_session(session_id)
        return opened

    # ------------------------------------------------------------------ passwords

    def authenticate_password(self, email: str, password: str, *, workspace_id: str | None = None) -> Principal:
        """A person principal for a correct email + password, in ``workspace_id``
        or else the one the person was last active in (a session seen there; their first
        workspace when none was). Every failure is the same Unauthenticated, and an unknown
        email costs the same hashing time."""
        person_id, stored = self.verify_password(email, password, workspace_id=workspace_id)
        memberships = self._memberships(person_id, workspace_id)
        if not memberships:
            raise Unauthenticated(detail="wrong email or password")
        workspace, role = self._last_active(person_id, memberships)
        principal = Principal.person(workspace, person_id, scopes=SESSION_SCOPES, role=role)
        rehashed = self.hasher.hash(password) if self.hasher.check_needs_rehash(stored) else None
        with self.store.write(workspace) as tx:  # the sign-in's audit entry, and a due rehash
            if rehashed is not None:
                tx.set_password_hash(person_id, rehashed)
            record(tx, principal, SIGN_IN, target=person_id, at=self.clock())
        return principal

    def verify_password(self, email: str, password: str, *, workspace_id: str | None = None) -> tuple[str, str]:
        """(person id, stored hash) when ``password`` is the account's, whatever workspaces it is in
        (none, for a person removed from all of them whom an invitation brings back); else the one
        Unauthenticated, at the same hashing cost for an unknown email. A wrong password is written
        to the audit log of ``workspace_id``, or of every workspace the account belongs to."""
        failure = Unauthenticated(detail="wrong email or password")
        try:
            email = normalize_email(email)
        except ValidationFailed:
            raise failure from None
        if not isinstance(password, str) or len(password) > MAX_PASSWORD:
            raise failure
        found = self.store.login_lookup(email)
        if found is None or found[1] is None:
            self._burn(password)
            raise failure  # no account: no workspace whose log it belongs in
        person_id, stored = found
        try:
            self.hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            self._failed_sign_in(person_id, self._memberships(person_id, workspace_id))
            raise failure from None
        return person_id, stored

    def _last_active(self, person_id: str, memberships: list[tuple[WorkspaceRow, str]]) -> tuple[str, str]:
        """(workspace id, role) of the membership whose sessions were seen last; the oldest membership
        when the person has been seen in none (``memberships`` is oldest first)."""
        def seen(membership: tuple[WorkspaceRow, str]) -> datetime:
            with self.store.read(membership[0].id) as tx:
                return tx.team.last_seen_of(person_id) or datetime.min.replace(tzinfo=UTC)
        chosen = max(memberships, key=seen) if len(memberships) > 1 else memberships[0]  # a tie: the oldest
        return chosen[0].id, chosen[1]

    def _memberships(self, person_id: str, workspace_id: str | None) -> list[tuple[WorkspaceRow, str]]:
        """The person's (workspace, role) pairs: only ``workspace_id``'s when one is named."""
        memberships = self.store.memberships(person_id)
        return memberships if workspace_id is None else [(w, r) for w, r in memberships if w.id == workspace_id]

    def _failed_sign_in(self, person_id: str, memberships: list[tuple[WorkspaceRow, str]]) -> None:
        """A wrong password for this account: an entry in each workspace the sign-in was aimed at
        (the one named, or every one the account belongs to), whose owners may need to know."""
        for workspace, _ in memberships:
            with self.store.write(workspace.id) as tx:
                record(tx, ANONYMOUS, SIGN_IN_FAILED, target=person_id, details={"reason": "wrong_password"},
                       at=self.clock())

    def _burn(self, password: str) -> None:
        if self._dummy_hash is None:
            self._dummy_hash = self.hasher.hash(secrets.token_urlsafe(16))
        try:
            self.hasher.verify(self._dummy_hash, password or "x")
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            pass

    # ------------------------------------------------------------------ web sessions

    def create_session(self, principal: Principal, *, user_agent: str = "") -> tuple[str, str]:
        """Open a web session for a signed-in person: (session cookie value, CSRF token).
        ``user_agent`` is the browser's, kept (capped) so Settings → Sessions can say where it is."""
        if not principal.is_person:
            raise PolicyDenied(detail="only a person has a web session")
        now = self.clock()
        session_id = _SESSION_PREFIX + secrets.token_urlsafe(32)
        with self.store.write(principal.workspace_id) as tx:
            if tx.member(principal.principal_id) is None:
                raise Unauthenticated(detail="not a member of this workspace")
            tx.insert_session(SessionRow(
                id=new_id(), person_id=principal.principal_id, session_hash=_sha256(session_id), created_at=now,
                expires_at=now + self.session_ttl, last_seen_at=now, ended_at=None,
                user_agent=(user_agent or "")[:MAX_USER_AGENT],
            ))
        return session_id, self.csrf_token(session_id)

    def session_principal(self, session_id: str, *, workspace_id: str | None = None) -> Principal:
        """The person a session cookie stands for; Unauthenticated if unknown, ended or expired."""
        failure = Unauthenticated(detail="no such session; sign in again", next_call="POST /v1/session")
        if not isinstance(session_id, str) or not session_id.startswith(_SESSION_PREFIX) or len(session_id) > 200:
            raise failure
        digest = _sha256(session_id)
        found = self.store.resolve_credential("session", digest)
        if found is None:
            raise failure
        session_workspace, row_id = found
        now = self.clock()
        with self.store.read(session_workspace) as tx:
            row = tx.session(row_id)
            if row is None or not hmac.compare_digest(row.session_hash, digest):
                raise failure
            if row.ended_at is not None or row.expires_at <= now:
                raise Unauthenticated(detail="this session has ended; sign in again", next_call="POST /v1/session")
            member = tx.member(row.person_id)
            if member is None:
                raise failure
        if now - row.last_seen_at >= SESSION_TOUCH_GRANULARITY:
            with self.store.write(session_workspace) as tx:
                tx.touch_session(row.id, now)
        principal = Principal.person(session_workspace, row.person_id, scopes=SESSION_SCOPES, role=member.role)
        if workspace_id is not None and workspace_id != session_workspace:
            return self.switch_workspace(principal, workspace_id)
        return principal

    def end_session(self, session_id: str) -> None:
        """Sign out. Ending an unknown or already-ended session is not an error."""
        if not isinstance(session_id, str):
            return
        found = self.store.resolve_credential("session", _sha256(session_id))
        if found is None:
            return
        with self.store.write(found[0]) as tx:
            tx.end_session(found[1], self.clock())

    def csrf_token(self, session_id: str) -> str:
        mac = hmac.new(self._secret, b"csrf:" + session_id.encode("utf-8"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")

    def check_csrf(self, session_id: str, csrf_token: str) -> bool:
        if not isinstance(session_id, str) or not isinstance(csrf_token, str):
            return False
        return hmac.compare_digest(self.csrf_token(session_id), csrf_token)


def _sha256(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()
