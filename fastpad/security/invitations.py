"""Joining a workspace: invitations by email, and open sign-up where the deployment allows it.

An owner or admin invites an email address with a role. The invitation is a single-use link,
valid for ``INVITATION_TTL``, whose secret is shown once to the inviter (and mailed when the
deployment configures SMTP); only its SHA-256 is stored, and the credential index resolves it to
its workspace the way a bearer token is. The invitee opens the link, chooses a display name and
password, and is signed in as a member. A link that was used, has expired, was revoked or never
existed is one and the same :class:`InvitationGone`, so the link says nothing about which.

``fastpad.json``'s ``"signup"`` is ``"invite"`` (the default: invitations only), ``"open"``
(anyone creates an account and a workspace of their own, and invitations work too) or
``"closed"`` (nobody joins: no invitation is issued or accepted, not even one issued before).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from fastpad.errors import Conflict, NotFound, PolicyDenied
from fastpad.notes.ids import new_id
from fastpad.security.audit import INVITATION_ACCEPTED, INVITATION_CREATED, INVITATION_REVOKED, AuditActor, record
from fastpad.security.mail import Mailer
from fastpad.security.people import (MANAGERS, PeopleService, check_display_name, check_password, check_role,
                                     normalize_email)
from fastpad.security.principals import Principal
from fastpad.security.workspaces import MAX_WORKSPACE_NAME
from fastpad.store import PersonRow, Store, utcnow
from fastpad.store.team import InvitationRow

INVITATION_TTL = timedelta(days=7)
INVITABLE_ROLES = ("admin", "member", "viewer")  # an owner is made by changing a member's role
SIGNUP_MODES = ("invite", "open", "closed")
_PREFIX = "fpi_"


class InvitationGone(NotFound):
    """The one answer for a link that was used, expired, revoked or never issued."""


def gone() -> InvitationGone:
    return InvitationGone(detail="This invitation link is no longer valid: it was used, it expired or it was "
                                 "revoked. Ask whoever invited you for a new one.",
                          extra={"reason": "invitation_gone"})


@dataclass(frozen=True)
class Invitation:
    id: str
    workspace_id: str
    email: str
    role: str
    invited_by: str
    created_at: datetime
    expires_at: datetime
    status: str  # pending | accepted | revoked | expired
    workspace_name: str = ""  # what the invitee's page names (only :meth:`InvitationService.open` reads it)

    @classmethod
    def from_row(cls, workspace_id: str, row: InvitationRow, now: datetime) -> "Invitation":
        status = ("accepted" if row.accepted_at else "revoked" if row.revoked_at
                  else "expired" if row.expires_at <= now else "pending")
        return cls(row.id, workspace_id, row.email, row.role, row.invited_by, row.created_at, row.expires_at, status)

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "email": self.email, "role": self.role, "invited_by": self.invited_by,
                "created_at": self.created_at.isoformat(), "expires_at": self.expires_at.isoformat(),
                "status": self.status}


@dataclass(frozen=True)
class IssuedInvitation:
    """What the inviter sees once: the link itself, and whether it was also mailed."""
    invitation: Invitation
    link: str
    mailed: bool
    mail_error: str | None

    def as_dict(self) -> dict[str, object]:
        return {**self.invitation.as_dict(), "link": self.link, "mailed": self.mailed, "mail_error": self.mail_error}


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class InvitationService:
    def __init__(self, store: Store, people: PeopleService, *, mailer: Mailer | None = None,
                 signup: str = "invite", clock: Callable[[], datetime] = utcnow) -> None:
        if signup not in SIGNUP_MODES:
            raise ValueError(f'fastpad.json: "signup" is one of {", ".join(SIGNUP_MODES)}, not {signup!r}')
        self.store = store
        self.people = people
        self.mailer = mailer
        self.signup = signup
        self.clock = clock

    # ------------------------------------------------------------------ the inviter

    def invite(self, principal: Principal, email: str, *, role: str = "member", base_url: str) -> IssuedInvitation:
        """A single-use link for ``email`` to join the principal's workspace as ``role``. 409 if
        they are a member already. Mailed when SMTP is configured; a mail that fails to go still
        leaves the link valid, and the answer says why it was not sent."""
        principal.require_role(MANAGERS, "Inviting people")
        if self.signup == "closed":
            raise self._closed()
        email = normalize_email(email)
        check_role(role, allowed=INVITABLE_ROLES)
        now = self.clock()
        secret = _PREFIX + secrets.token_urlsafe(32)
        row = InvitationRow(new_id(), email, role, _hash(secret), principal.principal_id, now, now + INVITATION_TTL)
        with self.store.write(principal.workspace_id) as tx:
            if tx.person_by_email(email) is not None:
                raise Conflict(detail=f"{email} is already a member of this workspace",
                               extra={"reason": "already_member", "email": email})
            tx.team.insert_invitation(row)
            workspace = tx.workspace()
            record(tx, principal, INVITATION_CREATED, target=row.id, details={"email": email, "role": role})
        link = f"{base_url.rstrip('/')}/invite/{secret}"
        mailed, mail_error = self._mail(email, link, workspace.name if workspace else "a Fastpad workspace", role)
        return IssuedInvitation(Invitation.from_row(principal.workspace_id, row, now), link, mailed, mail_error)

    def _mail(self, email: str, link: str, workspace_name: str, role: str) -> tuple[bool, str | None]:
        if self.mailer is None:
            return False, None
        body = (f"You are invited to join {workspace_name} on Fastpad as {role}.\n\n"
                f"Open this link to choose your name and password (it works once, for 7 days):\n\n{link}\n")
        try:
            self.mailer.send(email, f"Join {workspace_name} on Fastpad", body)
        except OSError as exc:  # smtplib's SMTPException is an OSError, as a refused connection is
            return False, f"{type(exc).__name__}: {exc}"
        return True, None

    def list(self, principal: Principal) -> list[Invitation]:
        principal.require_role(MANAGERS, "Listing invitations")
        now = self.clock()
        with self.store.read(principal.workspace_id) as tx:
            rows = tx.team.invitations()
        return [Invitation.from_row(principal.workspace_id, r, now) for r in rows]

    def revoke(self, principal: Principal, invitation_id: str) -> Invitation:
        """Revoke a pending invitation: its link then answers as a used one does. 404 for an
        unknown id, 409 for one already accepted or revoked."""
        principal.require_role(MANAGERS, "Revoking an invitation")
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            row = tx.team.invitation(invitation_id, for_update=True)
            if row is None:
                raise NotFound(detail=f"invitation {invitation_id} not found")
            if not tx.team.close_invitation(invitation_id, now):
                raise Conflict(detail=f"invitation {invitation_id} was already accepted or revoked",
                               extra={"reason": "invitation_closed"})
            record(tx, principal, INVITATION_REVOKED, target=invitation_id, details={"email": row.email})
            closed = tx.team.invitation(invitation_id)
        assert closed is not None
        return Invitation.from_row(principal.workspace_id, closed, now)

    # ------------------------------------------------------------------ the invitee

    def open(self, secret: str) -> Invitation:
        """The pending invitation a link stands for, or :func:`gone`."""
        if self.signup == "closed":
            raise self._closed()
        found = self._resolve(secret)
        now = self.clock()
        with self.store.read(found[0]) as tx:
            row = tx.team.invitation(found[1])
            workspace = tx.workspace()
        invitation = Invitation.from_row(found[0], row, now) if row is not None else None
        if invitation is None or invitation.status != "pending":
            raise gone()
        return replace(invitation, workspace_name=workspace.name if workspace else "")

    def account_exists(self, email: str) -> bool:
        """Whether the invitee already has a Fastpad account (then they sign in with its password)."""
        return self.store.login_lookup(email) is not None

    def accept(self, secret: str, *, display_name: str, password: str) -> Principal:
        """Join through the link: a new person chooses a display name and password; a person who has
        an account already gives its password. Single-use even under a race: closing the
        invitation and adding the member commit together, and only one closing succeeds."""
        invitation = self.open(secret)
        existing = self.store.login_lookup(invitation.email)
        if existing is None:
            display_name = check_display_name(display_name)
            check_password(password, invitation.email)
            password_hash: str | None = self.people.hasher.hash(password)
            person_id = new_id()
        else:
            # An existing account: proven by its password, which stays as it is.
            person_id, password_hash = self.people.verify_password(invitation.email, password)[0], None
        now = self.clock()
        with self.store.write(invitation.workspace_id) as tx:
            if not tx.team.close_invitation(invitation.id, now, accepted_by=person_id):
                raise gone()
            if tx.member(person_id) is not None:
                raise Conflict(detail=f"{invitation.email} is already a member of this workspace",
                               extra={"reason": "already_member"})
            if existing is None:
                tx.insert_person(PersonRow(person_id, invitation.email, display_name, password_hash, now))
            tx.add_member(person_id, invitation.role, now)
            record(tx, AuditActor("person", person_id), INVITATION_ACCEPTED, target=invitation.id,
                   details={"role": invitation.role})
        return self.people.principal_for(invitation.workspace_id, person_id)

    def _resolve(self, secret: str) -> tuple[str, str]:
        if not isinstance(secret, str) or not secret.startswith(_PREFIX) or len(secret) > 100:
            raise gone()
        found = self.store.resolve_credential("invitation", _hash(secret))
        if found is None:
            raise gone()
        return found

    # ------------------------------------------------------------------ open sign-up

    def sign_up(self, email: str, password: str, *, display_name: str, workspace_name: str = "") -> Principal:
        """Where sign-up is open: a new account and a workspace of its own, owned by it."""
        if self.signup != "open":
            raise self._closed() if self.signup == "closed" else PolicyDenied(
                detail="This server takes new people by invitation only; ask a member to invite you.",
                extra={"reason": "signup_by_invitation"})
        email = normalize_email(email)
        display_name = check_display_name(display_name)
        check_password(password, email)
        if self.store.login_lookup(email) is not None:
            raise Conflict(detail=f"an account for {email} exists already; sign in instead",
                           extra={"reason": "account_exists"}, next_call="POST /v1/session")
        name = (workspace_name or "").strip()[:MAX_WORKSPACE_NAME] or f"{display_name}'s workspace"
        workspace_id = new_id()
        with self.store.write(workspace_id) as tx:
            tx.insert_workspace(name, self.clock())
        person = self.people.create_person(workspace_id, email, password=password, role="owner",
                                           display_name=display_name)
        return self.people.principal_for(workspace_id, person.id)

    @staticmethod
    def _closed() -> PolicyDenied:
        return PolicyDenied(detail='This server takes no new people: sign-up is closed ("signup": "closed" in '
                                   'fastpad.json), and invitations with it.', extra={"reason": "signup_closed"},
                            next_call='the operator sets "signup" to "invite" in fastpad.json to let people join')

