"""Statements for published notes: ``tx.publications``.

Like every statement in the store, each adds ``workspace_id = ?`` itself. The
anonymous route's lookup by note id alone is ``Store.published_workspace``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class PublicationRow:
    note_id: str
    published_by: str
    published_at: datetime


class Publications:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    def publish(self, note_id: str, by: str, at: datetime) -> PublicationRow:
        """Publish the note; publishing it again keeps its first publication."""
        self._tx._w()
        self._tx._x(
            "INSERT INTO published_notes (note_id, workspace_id, published_by, published_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (note_id) DO NOTHING",
            (note_id, self._ws, by, self._d.ts(at)),
        )
        row = self.get(note_id)
        assert row is not None
        return row

    def unpublish(self, note_id: str) -> bool:
        """Whether the note was published."""
        self._tx._w()
        gone = self._tx._x("DELETE FROM published_notes WHERE workspace_id = ? AND note_id = ? RETURNING note_id",
                           (self._ws, note_id)).fetchall()
        return bool(gone)

    def get(self, note_id: str) -> PublicationRow | None:
        row = self._tx._x(
            "SELECT note_id, published_by, published_at FROM published_notes WHERE workspace_id = ? AND note_id = ?",
            (self._ws, note_id),
        ).fetchone()
        return PublicationRow(row[0], row[1], self._d.ts_out(row[2])) if row else None

    def published_among(self, note_ids: Iterable[str]) -> set[str]:
        ids = list(note_ids)
        if not ids:
            return set()
        rows = self._tx._x(
            f"SELECT note_id FROM published_notes WHERE workspace_id = ? AND {self._d.in_ids('note_id')}",
            (self._ws, self._d.ids(ids)),
        ).fetchall()
        return {r[0] for r in rows}
