"""Removing trashed notes for good: ``TrashPurge(tx)``.

Deleting the note row removes everything hanging off it by foreign key (op
log, block projection and with it the lexical index, outgoing links, titles,
memory topic); an incoming link's target falls back to unresolved. Its turns
go too, deleted by id (a turn's note is not a foreign key: a turn may propose
a note that does not exist yet), and with them their sources. The change-feed
rows about the note stay: they hold no content.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


class TrashPurge:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    def delete_trashed_before(self, cutoff: datetime, *, limit: int) -> list[str]:
        """Delete up to ``limit`` notes trashed at or before ``cutoff``, oldest first; their ids.
        The trash condition is repeated on the deleted row itself, so a note
        restored while this runs is re-checked and kept."""
        tx = self._tx
        tx._w()
        at = tx._d.ts(cutoff)
        rows = tx._x(
            "DELETE FROM notes WHERE workspace_id = ? AND trashed_at IS NOT NULL AND trashed_at <= ?"
            " AND id IN (SELECT id FROM notes WHERE workspace_id = ? AND trashed_at IS NOT NULL AND trashed_at <= ?"
            " ORDER BY trashed_at, id LIMIT ?) RETURNING id",
            (tx.workspace_id, at, tx.workspace_id, at, int(limit)),
        ).fetchall()
        purged = sorted(r[0] for r in rows)
        if purged:
            tx._x(f"DELETE FROM turns WHERE workspace_id = ? AND {tx._d.in_ids('note_id')}",
                  (tx.workspace_id, tx._d.ids(purged)))
        return purged
