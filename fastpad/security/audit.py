"""The workspace audit log: who did what that an owner or admin may have to account for.

Writing: every service that performs an audited act calls :func:`record` with the
write transaction of that act, so the act and its entry commit together (or neither
does). An act that writes nothing — a sign-in, a failed sign-in, an export — calls
:meth:`AuditService.record_alone`, one short transaction of its own. Each act is recorded
at exactly one place, the service method every surface reaches it through.

Reading: :meth:`AuditService.page` — a signed-in owner or admin only; no token of any
scope reaches it, and a refusal names the roles it needs. Pages are newest first,
keyset by ``seq`` (the cursor is the last entry's ``seq``).

The turns' own log (``turn_events``, fastpad/store/turns.py) stays what revert and the
review page read: it holds each landing's frontiers and prior provenance, the mechanism
of undoing it. It is not a second record of who did what for the workspace: accepts,
auto-applied turns and reverts are written here too, by :func:`record_turn_event`, in
the same transaction as their turn event, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from fastpad.errors import FieldError, PolicyDenied, ValidationFailed
from fastpad.security.principals import Principal
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.audit import AuditFilter, AuditRow
from fastpad.store.turns import TurnEventRow

# The actions, as stable slugs: `area.what_happened`.
SIGN_IN = "session.signed_in"
SIGN_IN_FAILED = "session.sign_in_failed"
TOKEN_MINT = "token.minted"
TOKEN_REVOKE = "token.revoked"
TURN_ACCEPT = "turn.accepted"
TURN_AUTO_APPLY = "turn.auto_applied"
TURN_REVERT = "turn.reverted"
NOTE_PUBLISH = "note.published"
NOTE_UNPUBLISH = "note.unpublished"
NOTE_PURGE = "note.purged"
IMPORT_START = "import.started"
IMPORT_FINISH = "import.finished"
WORKSPACE_EXPORT = "workspace.exported"
PLACEHOLDER_REVEAL = "placeholder.revealed"
# The team's (invitations, roles, removals), recorded by fastpad/security/team.py and invitations.py.
INVITATION_CREATED = "invitation.created"
INVITATION_ACCEPTED = "invitation.accepted"
INVITATION_REVOKED = "invitation.revoked"
MEMBER_ROLE_CHANGED = "member.role_changed"
MEMBER_REMOVED = "member.removed"
WORKSPACE_CREATED = "workspace.created"  # fastpad/security/workspaces.py, in the new workspace's own log
ACTIONS = (SIGN_IN, SIGN_IN_FAILED, TOKEN_MINT, TOKEN_REVOKE, TURN_ACCEPT, TURN_AUTO_APPLY, TURN_REVERT,
           NOTE_PUBLISH, NOTE_UNPUBLISH, NOTE_PURGE, IMPORT_START, IMPORT_FINISH, WORKSPACE_EXPORT, PLACEHOLDER_REVEAL,
           INVITATION_CREATED, INVITATION_ACCEPTED, INVITATION_REVOKED, MEMBER_ROLE_CHANGED, MEMBER_REMOVED,
           WORKSPACE_CREATED)

# The turn events that are workspace audit entries too (the rest — proposing, rejecting,
# abandoning, marking reviewed — are the review's own business).
_TURN_ACTIONS = {"accept": TURN_ACCEPT, "auto_apply": TURN_AUTO_APPLY, "revert": TURN_REVERT}

READER_ROLES = ("owner", "admin")
DEFAULT_PAGE = 50
MAX_PAGE = 200


@dataclass(frozen=True)
class AuditActor:
    """Who acted when no principal stands for them: the operator at the command line, the server
    itself (the trash's retention pass), nobody known (a failed sign-in), or a person named by
    id before they hold a session (an invitee accepting: ``AuditActor("person", person_id)``)."""

    kind: str  # operator | system | anonymous | person
    id: str | None = None


OPERATOR = AuditActor("operator")
SYSTEM = AuditActor("system")
ANONYMOUS = AuditActor("anonymous")


def record(tx: WorkspaceTx, actor: Principal | AuditActor | None, action: str, *, target: str | None = None,
           note_id: str | None = None, details: Mapping[str, Any] | None = None,
           at: datetime | None = None) -> None:
    """Append one entry to ``tx``'s workspace log, inside ``tx`` (a write transaction).

    ``actor``: the acting principal (a person; or an agent, its token kept), an
    :class:`AuditActor` (``OPERATOR``, ``SYSTEM``, ``ANONYMOUS``), or None for the operator.
    ``action``: one of :data:`ACTIONS`. ``target``: the id acted on (a token, a person, a
    turn, an import…); ``note_id``: the note, when the act concerns one. ``details``: a
    small JSON object of ids and facts, never note text or a secret."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    if actor is None:
        actor = OPERATOR
    if isinstance(actor, Principal):
        kind, actor_id, token_id = actor.kind, actor.principal_id, actor.token_id
    else:
        kind, actor_id, token_id = actor.kind, actor.id, None
    tx.audit.append(AuditRow(at=at or utcnow(), actor_kind=kind, actor_id=actor_id, token_id=token_id,
                             action=action, note_id=note_id, target=target, details=dict(details or {})))


def record_turn_event(tx: WorkspaceTx, event: TurnEventRow) -> None:
    """Append a turn's event to its own log and, for an accept, an auto-apply or a revert,
    the workspace entry saying so — one call, so neither is written without the other."""
    tx.turns.append_event(event)
    action = _TURN_ACTIONS.get(event.action)
    if action is None:
        return
    tx.audit.append(AuditRow(
        at=event.at, actor_kind=event.actor_kind, actor_id=event.actor_id, token_id=event.token_id,
        action=action, note_id=event.note_id, target=event.turn_id,
        details={"blocks": len(event.block_ids), "ops": len(event.op_indexes)},
    ))


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    at: datetime
    actor_kind: str
    actor_id: str | None
    token_id: str | None
    action: str
    note_id: str | None
    target: str | None
    details: dict[str, Any]

    @classmethod
    def from_row(cls, row: AuditRow) -> "AuditEntry":
        assert row.seq is not None
        return cls(row.seq, row.at, row.actor_kind, row.actor_id, row.token_id, row.action, row.note_id,
                   row.target, dict(row.details))

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq, "at": self.at.isoformat(),
            "actor": {"kind": self.actor_kind, "id": self.actor_id, "token_id": self.token_id},
            "action": self.action, "note_id": self.note_id, "target": self.target, "details": self.details,
        }


@dataclass(frozen=True)
class AuditPage:
    entries: list[AuditEntry]
    next_cursor: str | None  # None: this is the last page

    def as_dict(self) -> dict[str, Any]:
        return {"items": [e.as_dict() for e in self.entries], "next_cursor": self.next_cursor}


class AuditService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def record_alone(self, workspace_id: str, actor: Principal | AuditActor | None, action: str, *,
                     target: str | None = None, note_id: str | None = None,
                     details: Mapping[str, Any] | None = None) -> None:
        """:func:`record` in a short transaction of its own, for an act that writes nothing."""
        with self.store.write(workspace_id) as tx:
            record(tx, actor, action, target=target, note_id=note_id, details=details, at=self.clock())

    def page(self, principal: Principal, which: AuditFilter = AuditFilter(), *, cursor: str | None = None,
             limit: int = DEFAULT_PAGE) -> AuditPage:
        """One page of the log, newest first, for a signed-in owner or admin."""
        principal.require_signed_in("Reading the audit log")
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_PAGE}")])
        if which.action is not None and which.action not in ACTIONS:
            raise ValidationFailed(detail=f"action is one of {', '.join(ACTIONS)}",
                                   field_errors=[FieldError("action", "enum", "one of " + ", ".join(ACTIONS))])
        which = replace(which, since=_instant(which.since, "since"), until=_instant(which.until, "until"))
        if which.since is not None and which.until is not None and which.until <= which.since:
            raise ValidationFailed(detail="until is after since",
                                   field_errors=[FieldError("until", "range", "after since")])
        before = _cursor_seq(cursor)
        with self.store.read(principal.workspace_id) as tx:
            member = tx.member(principal.principal_id)
            role = member.role if member is not None else None
            if role not in READER_ROLES:
                raise PolicyDenied(
                    detail=f"The audit log is for a workspace owner or admin; you are {_a(role)}.",
                    extra={"reason": "role", "required_role": list(READER_ROLES), "role": role},
                    next_call="ask an owner or admin of this workspace",
                )
            rows = tx.audit.page(which, before_seq=before, limit=limit + 1)
        entries = [AuditEntry.from_row(r) for r in rows[:limit]]
        return AuditPage(entries, str(entries[-1].seq) if len(rows) > limit else None)


def _instant(value: datetime | None, name: str) -> datetime | None:
    """A filter's time in UTC; one without an offset, or past what UTC can hold, is refused."""
    if value is None:
        return None
    try:
        if value.tzinfo is None:
            raise ValueError
        return value.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise ValidationFailed(detail=f"{name} is an ISO 8601 datetime with an offset, e.g. 2026-12-07T00:00:00Z",
                               field_errors=[FieldError(name, "datetime", "an ISO 8601 datetime with an offset")]
                               ) from None


def _cursor_seq(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    if not cursor.isdigit() or len(cursor) > 19:
        raise ValidationFailed(detail="cursor is the next_cursor of the page before, as it was given",
                               field_errors=[FieldError("cursor", "format", "a next_cursor")])
    return int(cursor)


def _a(role: str | None) -> str:
    return "not a member" if role is None else f"{'an' if role[0] in 'aeiou' else 'a'} {role}"
