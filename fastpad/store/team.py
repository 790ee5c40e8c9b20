"""Statements for a workspace's team: ``tx.team`` — invitations, roles, display names, each
member's sessions and last activity, and the credentials that answer to a person.

Like every statement in the store, each adds ``workspace_id = ?`` itself (and PostgreSQL's
forced row-level security holds the same line). The invitee's link is resolved to its
workspace before one is known through the credential index, like a bearer token.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class InvitationRow:
    id: str
    email: str
    role: str
    token_hash: str
    invited_by: str
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None = None
    accepted_by: str | None = None
    revoked_at: datetime | None = None


@dataclass(frozen=True)
class SessionSeen:
    """One web session as Settings → Sessions lists it."""
    id: str
    session_hash: str
    user_agent: str
    created_at: datetime
    last_seen_at: datetime


_INVITATION_COLUMNS = ("id, email, role, token_hash, invited_by, created_at, expires_at, accepted_at, accepted_by,"
                       " revoked_at")


class TeamTables:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    # ------------------------------------------------------------------ invitations

    def insert_invitation(self, row: InvitationRow) -> None:
        self._tx._w()
        d = self._d
        self._tx._x(
            f"INSERT INTO invitations (workspace_id, {_INVITATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._ws, row.id, row.email, row.role, row.token_hash, row.invited_by, d.ts(row.created_at),
             d.ts(row.expires_at), d.ts(row.accepted_at), row.accepted_by, d.ts(row.revoked_at)),
        )
        self._tx._index_credential("invitation", row.token_hash, row.id)

    def invitation(self, invitation_id: str, *, for_update: bool = False) -> InvitationRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._tx._x(
            f"SELECT {_INVITATION_COLUMNS} FROM invitations WHERE workspace_id = ? AND id = ?{lock}",
            (self._ws, invitation_id),
        ).fetchone()
        return self._invitation(row) if row else None

    def invitations(self) -> list[InvitationRow]:
        rows = self._tx._x(
            f"SELECT {_INVITATION_COLUMNS} FROM invitations WHERE workspace_id = ? ORDER BY created_at DESC, id DESC",
            (self._ws,),
        ).fetchall()
        return [self._invitation(r) for r in rows]

    def close_invitation(self, invitation_id: str, at: datetime, *, accepted_by: str | None = None) -> bool:
        """Mark a still-open invitation accepted (by ``accepted_by``) or, without one, revoked.
        False when it was already closed: a link is used at most once."""
        self._tx._w()
        column = "accepted_at" if accepted_by is not None else "revoked_at"
        rows = self._tx._x(
            f"UPDATE invitations SET {column} = ?, accepted_by = COALESCE(?, accepted_by)"
            " WHERE workspace_id = ? AND id = ? AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id",
            (self._d.ts(at), accepted_by, self._ws, invitation_id),
        ).fetchall()
        return bool(rows)

    def _invitation(self, r: Sequence[Any]) -> InvitationRow:
        d = self._d
        return InvitationRow(r[0], r[1], r[2], r[3], r[4], d.ts_out(r[5]), d.ts_out(r[6]), d.ts_out(r[7]), r[8],
                             d.ts_out(r[9]))

    # ------------------------------------------------------------------ members

    def set_role(self, person_id: str, role: str) -> bool:
        self._tx._w()
        return (self._tx._x("UPDATE workspace_members SET role = ? WHERE workspace_id = ? AND person_id = ?",
                            (role, self._ws, person_id)).rowcount or 0) > 0

    def count_role(self, role: str) -> int:
        row = self._tx._x("SELECT COUNT(*) FROM workspace_members WHERE workspace_id = ? AND role = ?",
                          (self._ws, role)).fetchone()
        return int(row[0])

    def set_display_name(self, person_id: str, display_name: str) -> None:
        """Only for a member of this workspace."""
        self._tx._w()
        self._tx._x(
            "UPDATE people SET display_name = ? WHERE id = ?"
            " AND id IN (SELECT person_id FROM workspace_members WHERE workspace_id = ?)",
            (display_name, person_id, self._ws),
        )

    def last_seen_of(self, person_id: str) -> datetime | None:
        """When one of the person's web sessions here was last seen, ended ones included."""
        row = self._tx._x("SELECT MAX(last_seen_at) FROM web_sessions WHERE workspace_id = ? AND person_id = ?",
                          (self._ws, person_id)).fetchone()
        return self._d.ts_out(row[0]) if row else None

    def last_activity(self) -> dict[str, datetime]:
        """Each member's latest sign of life here: a session seen or a CLI token used."""
        rows = self._tx._x(
            "SELECT person_id, MAX(last_seen_at) FROM web_sessions WHERE workspace_id = ? GROUP BY person_id"
            " UNION ALL SELECT person_id, MAX(last_used_at) FROM tokens"
            " WHERE workspace_id = ? AND kind = 'person' AND last_used_at IS NOT NULL GROUP BY person_id",
            (self._ws, self._ws),
        ).fetchall()
        latest: dict[str, datetime] = {}
        for person_id, at in rows:
            seen = self._d.ts_out(at)
            if seen is not None and (person_id not in latest or seen > latest[person_id]):
                latest[person_id] = seen
        return latest

    # ------------------------------------------------------------------ credentials answering to a person

    def open_sessions_of(self, person_id: str, now: datetime) -> list[SessionSeen]:
        rows = self._tx._x(
            "SELECT id, session_hash, user_agent, created_at, last_seen_at FROM web_sessions"
            " WHERE workspace_id = ? AND person_id = ? AND ended_at IS NULL AND expires_at > ?"
            " ORDER BY last_seen_at DESC, id",
            (self._ws, person_id, self._d.ts(now)),
        ).fetchall()
        d = self._d
        return [SessionSeen(r[0], r[1], r[2], d.ts_out(r[3]), d.ts_out(r[4])) for r in rows]

    def end_session_of(self, person_id: str, session_id: str, at: datetime) -> bool:
        """End one of the person's own open sessions; False if there is no such open session."""
        self._tx._w()
        return (self._tx._x(
            "UPDATE web_sessions SET ended_at = ? WHERE workspace_id = ? AND id = ? AND person_id = ?"
            " AND ended_at IS NULL",
            (self._d.ts(at), self._ws, session_id, person_id),
        ).rowcount or 0) > 0

    def tokens_answering_to(self, person_id: str) -> list[str]:
        """Live tokens the person holds (their CLI tokens) or minted (agent tokens, from a session or
        delegated from their login): revoking each one's tree revokes everything delegated below."""
        rows = self._tx._x(
            "SELECT id FROM tokens WHERE workspace_id = ? AND revoked_at IS NULL"
            " AND ((kind = 'person' AND person_id = ?) OR (created_by_kind = 'person' AND created_by_id = ?))",
            (self._ws, person_id, person_id),
        ).fetchall()
        return [r[0] for r in rows]
