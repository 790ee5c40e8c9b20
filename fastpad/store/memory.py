"""Memory topics: notes designated for agents to read as an index or one at a
time. ``MemoryTopics(tx)``; the note itself stays an ordinary note."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class TopicRow:
    note_id: str
    name: str
    title: str
    archived: bool
    trashed: bool
    designated_by_kind: str
    designated_by_id: str
    designated_at: datetime
    note_updated_at: datetime


@dataclass(frozen=True)
class SummaryCandidate:
    note_id: str
    text: str
    origin: str
    review_state: str


class MemoryTopics:
    _SELECT = (
        "SELECT t.note_id, t.name, n.title, n.archived_at, n.trashed_at, t.designated_by_kind, t.designated_by_id,"
        " t.created_at, n.updated_at FROM memory_topics t"
        " JOIN notes n ON n.workspace_id = t.workspace_id AND n.id = t.note_id"
    )

    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    def by_note(self, note_id: str) -> TopicRow | None:
        return self._one("t.note_id = ?", note_id)

    def by_name(self, name_key: str) -> TopicRow | None:
        return self._one("t.name_key = ?", name_key)

    def count(self) -> int:
        tx = self._tx
        return int(tx._x("SELECT count(*) FROM memory_topics WHERE workspace_id = ?", (tx.workspace_id,)).fetchone()[0])

    def put(self, note_id: str, name: str, name_key: str, *, by_kind: str, by_id: str, at: datetime) -> None:
        """Designate a note, or rename its topic. A name another topic holds violates
        the unique key (the store's integrity error)."""
        tx = self._tx
        tx._w()
        tx._x(
            "INSERT INTO memory_topics (workspace_id, note_id, name, name_key, designated_by_kind, designated_by_id,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, note_id)"
            " DO UPDATE SET name = excluded.name, name_key = excluded.name_key",
            (tx.workspace_id, note_id, name, name_key, by_kind, by_id, tx._d.ts(at)),
        )

    def remove(self, note_id: str) -> bool:
        tx = self._tx
        tx._w()
        cur = tx._x("DELETE FROM memory_topics WHERE workspace_id = ? AND note_id = ?", (tx.workspace_id, note_id))
        return cur.rowcount > 0

    def listed(self, note_ids: Iterable[str] | None = None) -> list[TopicRow]:
        """Topics whose note is not in the trash, by name (case-folded)."""
        tx = self._tx
        where, params = self._visible(note_ids)
        rows = tx._x(f"{self._SELECT} WHERE {where} AND n.trashed_at IS NULL ORDER BY t.name_key", params).fetchall()
        return [self._row(r) for r in rows]

    def summary_candidates(self, note_ids: Iterable[str] | None = None, *, per_note: int) -> list[SummaryCandidate]:
        """The first ``per_note`` non-empty blocks of every topic note, in order."""
        tx = self._tx
        where, params = self._visible(note_ids)
        rows = tx._x(
            "SELECT note_id, text, origin, review_state FROM ("
            " SELECT b.note_id, b.text, b.origin, b.review_state, b.position,"
            "  ROW_NUMBER() OVER (PARTITION BY b.note_id ORDER BY b.position) AS nth"
            " FROM memory_topics t JOIN blocks b ON b.workspace_id = t.workspace_id AND b.note_id = t.note_id"
            f" WHERE {where} AND b.workspace_id = ? AND b.text <> ''"
            ") firsts WHERE nth <= ? ORDER BY note_id, position",
            (*params, tx.workspace_id, int(per_note)),
        ).fetchall()
        return [SummaryCandidate(*r) for r in rows]

    def _visible(self, note_ids: Iterable[str] | None) -> tuple[str, list[Any]]:
        tx = self._tx
        where, params = "t.workspace_id = ?", [tx.workspace_id]
        if note_ids is not None:
            where += " AND " + tx._d.in_ids("t.note_id")
            params.append(tx._d.ids(note_ids))
        return where, params

    def _one(self, condition: str, value: str) -> TopicRow | None:
        tx = self._tx
        row = tx._x(f"{self._SELECT} WHERE t.workspace_id = ? AND {condition}", (tx.workspace_id, value)).fetchone()
        return self._row(row) if row else None

    def _row(self, r: Any) -> TopicRow:
        d = self._tx._d
        return TopicRow(
            note_id=r[0], name=r[1], title=r[2], archived=r[3] is not None, trashed=r[4] is not None,
            designated_by_kind=r[5], designated_by_id=r[6], designated_at=d.ts_out(r[7]),
            note_updated_at=d.ts_out(r[8]),
        )
