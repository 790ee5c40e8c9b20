"""Statements for comments on notes: ``tx.comments``.

One row per comment (migration 27); a thread is its first comment and the replies naming it
(``thread_id``). Like every statement in the store, each adds ``workspace_id = ?`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class CommentRow:
    id: str
    note_id: str
    thread_id: str  # the thread's first comment; its own id for that one
    block_id: str
    range_start: bytes | None  # an encoded Loro cursor; None: a comment on the whole block
    range_end: bytes | None
    quote: str | None  # the range's text when the comment was made
    body: str
    author_kind: str  # person | agent
    author_id: str
    token_id: str | None
    created_at: datetime
    edited_at: datetime | None = None
    deleted_at: datetime | None = None
    resolved_at: datetime | None = None
    resolved_by_id: str | None = None

    @property
    def starts_thread(self) -> bool:
        return self.thread_id == self.id


_COLUMNS = ("id, note_id, thread_id, block_id, range_start, range_end, quote, body, author_kind, author_id, token_id,"
            " created_at, edited_at, deleted_at, resolved_at, resolved_by_id")


class CommentTables:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    def insert(self, row: CommentRow) -> None:
        self._tx._w()
        self._tx._x(f"INSERT INTO comments (workspace_id, {_COLUMNS}) VALUES (?{', ?' * 16})",
                    (self._ws, *self._values(row)))

    def update(self, row: CommentRow) -> None:
        """Write back what a comment may change: its body and the edit, delete and resolve stamps."""
        self._tx._w()
        d = self._d
        self._tx._x("UPDATE comments SET body = ?, edited_at = ?, deleted_at = ?, resolved_at = ?, resolved_by_id = ?"
                    " WHERE workspace_id = ? AND id = ?",
                    (row.body, d.ts(row.edited_at), d.ts(row.deleted_at), d.ts(row.resolved_at), row.resolved_by_id,
                     self._ws, row.id))

    def delete(self, comment_id: str) -> None:
        self._tx._w()
        self._tx._x("DELETE FROM comments WHERE workspace_id = ? AND id = ?", (self._ws, comment_id))

    def get(self, comment_id: str) -> CommentRow | None:
        row = self._tx._x(f"SELECT {_COLUMNS} FROM comments WHERE workspace_id = ? AND id = ?",
                          (self._ws, comment_id)).fetchone()
        return self._row(row) if row else None

    def in_note(self, note_id: str) -> list[CommentRow]:
        """Every comment on the note, thread by thread (oldest thread first), each thread oldest first."""
        return [self._row(r) for r in self._tx._x(
            f"SELECT {_COLUMNS} FROM comments WHERE workspace_id = ? AND note_id = ? ORDER BY thread_id, id",
            (self._ws, note_id)).fetchall()]

    def recent_by_agents(self, limit: int) -> list[CommentRow]:
        """The agents' comments still standing, newest first (ids are ULIDs: creation order)."""
        return [self._row(r) for r in self._tx._x(
            f"SELECT {_COLUMNS} FROM comments WHERE workspace_id = ? AND author_kind = 'agent' AND deleted_at IS NULL"
            " ORDER BY id DESC LIMIT ?", (self._ws, int(limit))).fetchall()]

    def notes_with_comments(self) -> list[str]:
        return [r[0] for r in self._tx._x(
            "SELECT DISTINCT note_id FROM comments WHERE workspace_id = ? ORDER BY note_id", (self._ws,)).fetchall()]

    def _values(self, r: CommentRow) -> tuple:
        d = self._d
        return (r.id, r.note_id, r.thread_id, r.block_id, r.range_start, r.range_end, r.quote, r.body, r.author_kind,
                r.author_id, r.token_id, d.ts(r.created_at), d.ts(r.edited_at), d.ts(r.deleted_at),
                d.ts(r.resolved_at), r.resolved_by_id)

    def _row(self, r: tuple) -> CommentRow:
        d = self._d
        return CommentRow(id=r[0], note_id=r[1], thread_id=r[2], block_id=r[3],
                          range_start=None if r[4] is None else bytes(r[4]),
                          range_end=None if r[5] is None else bytes(r[5]), quote=r[6], body=r[7], author_kind=r[8],
                          author_id=r[9], token_id=r[10], created_at=d.ts_out(r[11]), edited_at=d.ts_out(r[12]),
                          deleted_at=d.ts_out(r[13]), resolved_at=d.ts_out(r[14]), resolved_by_id=r[15])

