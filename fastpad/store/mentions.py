"""Statements for a person's Inbox of mentions: ``tx.mentions``.

One row per (person, block) mentioning them (migration 25), or per (person, comment) for a
mention in a comment (migration 27). Like every statement in
the store, each adds ``workspace_id = ?`` itself. A person's page is read newest first
by id (a ULID, so creation order), keyset style: a page ends at an id and the next
starts below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class MentionRow:
    id: str
    person_id: str  # who is mentioned
    note_id: str
    block_id: str
    mentioned_by_kind: str  # person | agent
    mentioned_by_id: str
    token_id: str | None
    origin: str  # the block's origin when the mention landed
    created_at: datetime
    read_at: datetime | None = None
    comment_id: str | None = None  # a mention in this comment; None: in the block's text


_COLUMNS = ("id, person_id, note_id, block_id, mentioned_by_kind, mentioned_by_id, token_id, origin, created_at,"
            " read_at, comment_id")


class MentionTables:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    def insert_new(self, rows: list[MentionRow]) -> None:
        """Insert each row whose (person, block) — or (person, comment), for a mention in a comment —
        has none yet; the others are left as they are."""
        self._tx._w()
        d = self._d
        for in_comment, target in ((False, "block_id) WHERE comment_id IS NULL"),
                                   (True, "comment_id) WHERE comment_id IS NOT NULL")):
            self._tx._many(
                f"INSERT INTO mentions (workspace_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT (workspace_id, person_id, {target} DO NOTHING",
                [(self._ws, r.id, r.person_id, r.note_id, r.block_id, r.mentioned_by_kind, r.mentioned_by_id,
                  r.token_id, r.origin, d.ts(r.created_at), d.ts(r.read_at), r.comment_id)
                 for r in rows if (r.comment_id is not None) == in_comment],
            )

    def pairs_in_note(self, note_id: str) -> set[tuple[str, str]]:
        """(person, block) of every mention the note already has a row for."""
        return {(r[0], r[1]) for r in self._tx._x(
            "SELECT person_id, block_id FROM mentions WHERE workspace_id = ? AND note_id = ? AND comment_id IS NULL",
            (self._ws, note_id),
        ).fetchall()}

    def page(self, person_id: str, *, before_id: str | None, unread_only: bool, limit: int) -> list[MentionRow]:
        """Up to ``limit`` of the person's mentions, newest first, all below ``before_id``."""
        where, params = ["workspace_id = ?", "person_id = ?"], [self._ws, person_id]
        if before_id is not None:
            where.append("id < ?")
            params.append(before_id)
        if unread_only:
            where.append("read_at IS NULL")
        params.append(int(limit))
        rows = self._tx._x(
            f"SELECT {_COLUMNS} FROM mentions WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?", params,
        ).fetchall()
        return [self._row(r) for r in rows]

    def unread_count(self, person_id: str) -> int:
        return int(self._tx._x(
            "SELECT COUNT(*) FROM mentions WHERE workspace_id = ? AND person_id = ? AND read_at IS NULL",
            (self._ws, person_id),
        ).fetchone()[0])

    def mark(self, person_id: str, mention_id: str, read_at: datetime | None) -> MentionRow | None:
        """Set one of the person's mentions read (at ``read_at``) or unread (None); None: no such mention."""
        self._tx._w()
        self._tx._x("UPDATE mentions SET read_at = ? WHERE workspace_id = ? AND person_id = ? AND id = ?",
                    (self._d.ts(read_at), self._ws, person_id, mention_id))
        row = self._tx._x(f"SELECT {_COLUMNS} FROM mentions WHERE workspace_id = ? AND person_id = ? AND id = ?",
                          (self._ws, person_id, mention_id)).fetchone()
        return self._row(row) if row else None

    def mark_all_read(self, person_id: str, at: datetime) -> int:
        """Every unread mention of the person, read at ``at``; how many were unread."""
        self._tx._w()
        return int(self._tx._x(
            "UPDATE mentions SET read_at = ? WHERE workspace_id = ? AND person_id = ? AND read_at IS NULL",
            (self._d.ts(at), self._ws, person_id),
        ).rowcount)

    def _row(self, r: tuple) -> MentionRow:
        d = self._d
        return MentionRow(id=r[0], person_id=r[1], note_id=r[2], block_id=r[3], mentioned_by_kind=r[4],
                          mentioned_by_id=r[5], token_id=r[6], origin=r[7], created_at=d.ts_out(r[8]),
                          read_at=d.ts_out(r[9]), comment_id=r[10])
