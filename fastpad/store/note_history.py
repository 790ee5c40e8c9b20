"""A note's op log read as its history: ``NoteHistoryLog(tx).changes(…)``.

Each row is one committed write that moved the note's document (``note_updates``), newest
first, without its payload: who made it (with their display name — a person without one by
their email — looked up only among this workspace's agents and members), the frontier after
it, and the proposal it landed through — the turn whose accept or auto-apply left the note at
exactly that frontier (``turn_events``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx

# The turn actions that land a proposal's text in the note (turns.py: the audit log).
_LANDINGS = "('accept', 'auto_apply')"


@dataclass(frozen=True)
class ChangeRow:
    seq: int
    kind: str
    frontier: str  # the note's frontier after this change
    author_kind: str  # person | agent
    author_id: str
    token_id: str | None
    author_name: str | None  # None: no longer a member or agent of this workspace
    origin: str
    at: datetime
    turn_id: str | None  # the proposal this change landed, if it landed one
    turn_author_kind: str | None
    turn_author_id: str | None
    turn_author_name: str | None


class NoteHistoryLog:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    def changes(self, note_id: str, *, before_seq: int | None, limit: int) -> list[ChangeRow]:
        """Up to ``limit`` changes with ``seq < before_seq`` (None: from the newest), newest first."""
        tx = self._tx
        d = tx._d
        below, params = ("", ()) if before_seq is None else (" AND u.seq < ?", (before_seq,))
        rows = tx._x(
            "SELECT u.seq, u.kind, u.frontier, u.principal_kind, u.principal_id, u.token_id,"
            " CASE u.principal_kind WHEN 'agent' THEN ua.name"
            "  WHEN 'person' THEN COALESCE(NULLIF(up.display_name, ''), up.email) END,"
            " u.origin, u.created_at,"
            " t.id, t.author_kind, t.author_id, ta.name"
            " FROM note_updates u"
            " LEFT JOIN agents ua ON u.principal_kind = 'agent' AND ua.workspace_id = u.workspace_id"
            "  AND ua.id = u.principal_id"
            " LEFT JOIN workspace_members um ON u.principal_kind = 'person' AND um.workspace_id = u.workspace_id"
            "  AND um.person_id = u.principal_id"
            " LEFT JOIN people up ON up.id = um.person_id"
            " LEFT JOIN turns t ON t.workspace_id = u.workspace_id AND t.id = ("
            "  SELECT MIN(e.turn_id) FROM turn_events e WHERE e.workspace_id = u.workspace_id"
            f"  AND e.note_id = u.note_id AND e.frontier_after = u.frontier AND e.action IN {_LANDINGS})"
            " LEFT JOIN agents ta ON t.author_kind = 'agent' AND ta.workspace_id = t.workspace_id AND ta.id = t.author_id"
            f" WHERE u.workspace_id = ? AND u.note_id = ?{below} ORDER BY u.seq DESC LIMIT ?",
            (tx.workspace_id, note_id, *params, limit),
        ).fetchall()
        return [ChangeRow(
            seq=int(r[0]), kind=r[1], frontier=r[2], author_kind=r[3], author_id=r[4], token_id=r[5],
            author_name=r[6] or None, origin=r[7], at=d.ts_out(r[8]), turn_id=r[9], turn_author_kind=r[10],
            turn_author_id=r[11], turn_author_name=r[12] or None,
        ) for r in rows]

