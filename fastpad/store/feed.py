"""The change feed's statements: ``tx.feed``.

Every committed write appends one row in its own transaction: note writes
through ``WorkspaceTx.write_note``, other writes (type definitions, memory
topics, edges, a purge) by calling ``tx.feed.append`` themselves. The row's
``seq`` comes from ``workspaces.feed_seq``, bumped in the same transaction;
that row lock serialises writers, so within a workspace seq order is commit
order, and once seq N is visible every row up to N is.

A row carries what changed and who changed it, never a body.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from fastpad.errors import NotFound
from fastpad.store.records import Actor

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx

MAX_BLOCK_IDS = 100  # a row lists at most this many block ids; blocks_touched counts them all
SYSTEM = "system"  # the actor kind of maintenance (the trash purge)


@dataclass(frozen=True)
class FeedRow:
    seq: int
    kind: str
    note_id: str | None
    subject_id: str | None
    actor_kind: str | None  # person | agent | system; None on rows older than the column
    actor_id: str | None
    token_id: str | None
    block_ids: tuple[str, ...] | None  # None: not recorded
    blocks_touched: int | None
    at: datetime


class FeedLog:
    """The change feed of one transaction's workspace."""

    _COLUMNS = "seq, kind, note_id, subject_id, actor_kind, actor_id, token_id, block_ids, blocks_touched, at"

    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self.appended = False  # whether this transaction added a row (Store.write signals after COMMIT)
        # (kind, note_id, subject_id) of each row added: what an idempotency claim records (store/claims.py)
        self.written: list[tuple[str, str | None, str | None]] = []

    def append(
        self,
        kind: str,
        *,
        at: datetime,
        actor: Actor | None,
        note_id: str | None = None,
        subject_id: str | None = None,
        block_ids: Sequence[str] | None = None,
    ) -> int:
        """Append one row; returns its seq. ``actor=None`` is the system itself."""
        tx = self._tx
        tx._w()
        d = tx._d
        bumped = tx._x(
            "UPDATE workspaces SET feed_seq = feed_seq + 1 WHERE id = ? RETURNING feed_seq", (tx.workspace_id,)
        ).fetchone()
        if bumped is None:
            raise NotFound(detail=f"workspace {tx.workspace_id} not found")
        seq = int(bumped[0])
        listed = None if block_ids is None else d.js(list(block_ids[:MAX_BLOCK_IDS]))
        tx._x(
            f"INSERT INTO change_feed (workspace_id, {self._COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tx.workspace_id, seq, kind, note_id, subject_id,
                SYSTEM if actor is None else actor.kind, None if actor is None else actor.id,
                None if actor is None else actor.token_id, listed,
                None if block_ids is None else len(block_ids), d.ts(at),
            ),
        )
        self.appended = True
        self.written.append((kind, note_id, subject_id))
        return seq

    def head(self) -> int:
        """The last seq handed out in this workspace (0 before the first write)."""
        tx = self._tx
        row = tx._x("SELECT feed_seq FROM workspaces WHERE id = ?", (tx.workspace_id,)).fetchone()
        return int(row[0]) if row else 0

    def read(
        self, *, after_seq: int, upto_seq: int, limit: int, note_ids: Iterable[str] | None = None
    ) -> list[FeedRow]:
        """Rows with ``after_seq < seq <= upto_seq`` in seq order; with ``note_ids``,
        only rows about those notes (rows about no note are left out too)."""
        tx = self._tx
        d = tx._d
        where = ["workspace_id = ?", "seq > ?", "seq <= ?"]
        params: list[object] = [tx.workspace_id, int(after_seq), int(upto_seq)]
        if note_ids is not None:
            where.append(d.in_ids("note_id"))
            params.append(d.ids(note_ids))
        params.append(int(limit))
        rows = tx._x(
            f"SELECT {self._COLUMNS} FROM change_feed WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?", params
        ).fetchall()
        return [
            FeedRow(
                seq=int(r[0]), kind=r[1], note_id=r[2], subject_id=r[3], actor_kind=r[4], actor_id=r[5],
                token_id=r[6], block_ids=None if r[7] is None else tuple(d.js_out(r[7])),
                blocks_touched=None if r[8] is None else int(r[8]), at=d.ts_out(r[9]),
            )
            for r in rows
        ]
