"""Row methods of ``WorkspaceTx`` for the workspace itself, its people and members, and its
agents (mixed into ``WorkspaceTx``; callers say ``tx.member(...)``, ``tx.agent(...)``).

People are global rows; every read here goes through this workspace's memberships, so a
person who is not a member of the transaction's workspace is not found.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fastpad.store.records import AgentRow, MemberRow, PersonRow, WorkspaceRow
from fastpad.store.tx_core import TxCore


class MemberRows(TxCore):
    """The workspace row, its people and members, and its agents."""

    # ------------------------------------------------------------------ workspace, people, members

    def insert_workspace(self, name: str, at: datetime) -> WorkspaceRow:
        self._w()
        self._x(
            "INSERT INTO workspaces (id, name, feed_seq, created_at) VALUES (?, ?, 0, ?)",
            (self.workspace_id, name, self._d.ts(at)),
        )
        return WorkspaceRow(self.workspace_id, name, at)

    def workspace(self) -> WorkspaceRow | None:
        row = self._x("SELECT id, name, created_at FROM workspaces WHERE id = ?", (self.workspace_id,)).fetchone()
        return WorkspaceRow(row[0], row[1], self._d.ts_out(row[2])) if row else None

    def insert_person(self, person: PersonRow) -> None:
        """People are global; this transaction's workspace is where they are being added."""
        self._w()
        self._x(
            "INSERT INTO people (id, email, display_name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)",
            (person.id, person.email, person.display_name, person.password_hash, self._d.ts(person.created_at)),
        )

    def add_member(self, person_id: str, role: str, at: datetime) -> None:
        self._w()
        self._x(
            "INSERT INTO workspace_members (workspace_id, person_id, role, created_at) VALUES (?, ?, ?, ?)",
            (self.workspace_id, person_id, role, self._d.ts(at)),
        )

    def remove_member(self, person_id: str) -> bool:
        self._w()
        cur = self._x("DELETE FROM workspace_members WHERE workspace_id = ? AND person_id = ?",
                      (self.workspace_id, person_id))
        return cur.rowcount > 0

    def member(self, person_id: str) -> MemberRow | None:
        row = self._x(
            "SELECT workspace_id, person_id, role, created_at FROM workspace_members"
            " WHERE workspace_id = ? AND person_id = ?",
            (self.workspace_id, person_id),
        ).fetchone()
        return MemberRow(row[0], row[1], row[2], self._d.ts_out(row[3])) if row else None

    def members(self) -> list[tuple[PersonRow, str]]:
        rows = self._x(
            "SELECT p.id, p.email, p.display_name, p.password_hash, p.created_at, m.role"
            " FROM workspace_members m JOIN people p ON p.id = m.person_id"
            " WHERE m.workspace_id = ? ORDER BY m.created_at, p.id",
            (self.workspace_id,),
        ).fetchall()
        return [(self._person(r), r[5]) for r in rows]

    def person(self, person_id: str) -> PersonRow | None:
        """A person, only if they are a member of this workspace."""
        row = self._x(
            "SELECT p.id, p.email, p.display_name, p.password_hash, p.created_at"
            " FROM people p JOIN workspace_members m ON m.person_id = p.id"
            " WHERE m.workspace_id = ? AND p.id = ?",
            (self.workspace_id, person_id),
        ).fetchone()
        return self._person(row) if row else None

    def person_by_email(self, email: str) -> PersonRow | None:
        """A member of this workspace by (lower-cased) email."""
        row = self._x(
            "SELECT p.id, p.email, p.display_name, p.password_hash, p.created_at"
            " FROM people p JOIN workspace_members m ON m.person_id = p.id"
            " WHERE m.workspace_id = ? AND p.email = ?",
            (self.workspace_id, email),
        ).fetchone()
        return self._person(row) if row else None

    def set_password_hash(self, person_id: str, password_hash: str | None) -> None:
        """Only for a member of this workspace."""
        self._w()
        self._x(
            "UPDATE people SET password_hash = ? WHERE id = ?"
            " AND id IN (SELECT person_id FROM workspace_members WHERE workspace_id = ?)",
            (password_hash, person_id, self.workspace_id),
        )

    def _person(self, r: Sequence[Any]) -> PersonRow:
        return PersonRow(r[0], r[1], r[2], r[3], self._d.ts_out(r[4]))

    # ------------------------------------------------------------------ agents

    def insert_agent(self, agent: AgentRow) -> None:
        self._w()
        self._x(
            "INSERT INTO agents (id, workspace_id, name, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
            (agent.id, self.workspace_id, agent.name, agent.created_by, self._d.ts(agent.created_at)),
        )

    def agent(self, agent_id: str) -> AgentRow | None:
        row = self._x(
            "SELECT id, name, created_by, created_at FROM agents WHERE workspace_id = ? AND id = ?",
            (self.workspace_id, agent_id),
        ).fetchone()
        return AgentRow(row[0], row[1], row[2], self._d.ts_out(row[3])) if row else None
