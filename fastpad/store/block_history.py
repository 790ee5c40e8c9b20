"""Blocks as they stand, with who last wrote them: ``BlockHistory(tx).block(…)``, ``.marked(…)``.

The author columns are kept by the one write path (``WorkspaceTx._project``):
set when a block's content is written, left alone when only its review state
changes. The author's display name is looked up here, and only among this
workspace's agents and members (a former member has no name).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class BlockStateRow:
    note_id: str
    block_id: str
    position: int
    type: str
    text: str
    attrs: dict[str, Any]
    origin: str
    review_state: str
    author_kind: str | None  # person | agent; None: last written before authors were recorded
    author_id: str | None
    author_token_id: str | None
    author_name: str | None
    written_at: datetime | None  # when the content was last written
    updated_at: datetime  # when content or review state last changed


class BlockHistory:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    def block(self, note_id: str, block_id: str) -> BlockStateRow | None:
        rows = self._rows(note_id, " AND b.block_id = ?", (block_id,))
        return rows[0] if rows else None

    def marked(self, note_id: str) -> list[BlockStateRow]:
        """The note's blocks a reader should know the provenance of, in order: text no person
        ratified (an agent's, unreviewed or accepted by the agent itself) and text from outside
        (captures, imports), reviewed or not."""
        return self._rows(note_id, " AND (b.review_state <> 'human_accepted' OR b.origin = 'inbound_untrusted')"
                                   " ORDER BY b.position", ())

    def _rows(self, note_id: str, condition: str, params: tuple[Any, ...]) -> list[BlockStateRow]:
        tx = self._tx
        d = tx._d
        rows = tx._x(
            "SELECT b.note_id, b.block_id, b.position, b.type, b.text, b.attrs, b.origin, b.review_state,"
            " b.author_kind, b.author_id, b.author_token_id,"
            " CASE b.author_kind WHEN 'agent' THEN a.name WHEN 'person' THEN p.display_name END,"
            " b.written_at, b.updated_at"
            " FROM blocks b"
            " LEFT JOIN agents a ON b.author_kind = 'agent' AND a.workspace_id = b.workspace_id AND a.id = b.author_id"
            " LEFT JOIN workspace_members m ON b.author_kind = 'person' AND m.workspace_id = b.workspace_id"
            "  AND m.person_id = b.author_id"
            " LEFT JOIN people p ON p.id = m.person_id"
            " WHERE b.workspace_id = ? AND b.note_id = ?" + condition,
            (tx.workspace_id, note_id, *params),
        ).fetchall()
        return [BlockStateRow(
            note_id=row[0], block_id=row[1], position=int(row[2]), type=row[3], text=row[4], attrs=d.js_out(row[5]),
            origin=row[6], review_state=row[7], author_kind=row[8], author_id=row[9], author_token_id=row[10],
            author_name=row[11] or None, written_at=d.ts_out(row[12]), updated_at=d.ts_out(row[13]),
        ) for row in rows]
