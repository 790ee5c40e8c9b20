"""Statements for proposals: turns, their sources, the audit log, session reads.

``TurnTables`` is built from a ``WorkspaceTx`` (``tx.turns``) and uses its
connection and dialect; like every statement in the store it adds
``workspace_id = ?`` itself. The rows here are plain records; JSON columns come
back decoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class TurnRow:
    id: str
    note_id: str
    status: str
    author_kind: str
    author_id: str
    author_key: str
    token_id: str | None
    session_id: str
    origin: str
    idempotency_key: str
    request_hash: str
    base_frontier: str
    proposal_update: bytes
    ops: list[dict[str, Any]]
    source_block_ids: list[str]
    diffs: list[dict[str, Any]]
    pending_blocks: list[str]
    pending_ops: list[int]
    landed_blocks: list[str]
    accepted_ops: list[int]
    authority: str | None
    reviewed_at: datetime | None
    reviewed_by: str | None
    created_at: datetime
    updated_at: datetime
    # A turn that creates its note: the note's title, types and properties; its blocks are the
    # turn's insertions. None for a turn on a note that exists.
    proposed_note: dict[str, Any] | None = None


@dataclass(frozen=True)
class TurnEventRow:
    """One audit-log entry. ``seq`` is None until it is written."""

    turn_id: str
    note_id: str
    action: str
    actor_kind: str
    actor_id: str
    token_id: str | None
    at: datetime
    review_state: str | None = None
    block_ids: tuple[str, ...] = ()
    op_indexes: tuple[int, ...] = ()
    frontier_before: str | None = None
    frontier_after: str | None = None
    provenance_before: dict[str, list[str]] | None = None
    # What the action did outside the note's prose, as ids (never note text): an accept's
    # {"links": [...], "events": [...], "moves": [...]}, a revert's {"undone": [...]}.
    effects: dict[str, Any] | None = None
    seq: int | None = None


@dataclass(frozen=True)
class SourceUse:
    """A block that reached a note citing a source block."""

    turn_id: str
    note_id: str
    block_id: str
    source_note_id: str
    source_block_id: str
    landed_at: datetime
    turn_status: str


@dataclass(frozen=True)
class ReadRow:
    note_id: str
    frontier: str
    blocks: list[tuple[str, str]]  # (block id, text) as read
    read_at: datetime


_TURN_COLUMNS = (
    "id, note_id, status, author_kind, author_id, author_key, token_id, session_id, origin, idempotency_key,"
    " request_hash, base_frontier, proposal_update, ops, source_block_ids, diffs, pending_blocks, pending_ops,"
    " landed_blocks, accepted_ops, authority, reviewed_at, reviewed_by, created_at, updated_at, proposed_note"
)
# Columns a service may change after the turn is written (a proposed note's base frontier is
# the empty note its accept creates).
_MUTABLE = frozenset({"base_frontier", "status", "pending_blocks", "pending_ops", "landed_blocks", "accepted_ops", "authority",
                      "reviewed_at", "reviewed_by", "updated_at"})
_JSON = frozenset({"pending_blocks", "pending_ops", "landed_blocks", "accepted_ops"})
_TIMES = frozenset({"reviewed_at", "updated_at"})


class TurnTables:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    def _x(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._tx._x(sql, params)

    # ------------------------------------------------------------------ turns

    def insert(self, t: TurnRow) -> None:
        self._tx._w()
        d = self._d
        self._x(
            f"INSERT INTO turns (workspace_id, {_TURN_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self._ws, t.id, t.note_id, t.status, t.author_kind, t.author_id, t.author_key, t.token_id,
                t.session_id, t.origin, t.idempotency_key, t.request_hash, t.base_frontier, t.proposal_update,
                d.js(t.ops), d.js(t.source_block_ids), d.js(t.diffs), d.js(t.pending_blocks), d.js(t.pending_ops),
                d.js(t.landed_blocks), d.js(t.accepted_ops), t.authority, d.ts(t.reviewed_at), t.reviewed_by,
                d.ts(t.created_at), d.ts(t.updated_at), None if t.proposed_note is None else d.js(t.proposed_note),
            ),
        )

    def get(self, turn_id: str, *, for_update: bool = False) -> TurnRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._x(
            f"SELECT {_TURN_COLUMNS} FROM turns WHERE workspace_id = ? AND id = ?{lock}", (self._ws, turn_id)
        ).fetchone()
        return self._turn(row) if row else None

    def by_idempotency_key(self, author_key: str, key: str) -> TurnRow | None:
        row = self._x(
            f"SELECT {_TURN_COLUMNS} FROM turns WHERE workspace_id = ? AND author_key = ? AND idempotency_key = ?",
            (self._ws, author_key, key),
        ).fetchone()
        return self._turn(row) if row else None

    def update(self, turn_id: str, **changes: Any) -> None:
        self._tx._w()
        unknown = set(changes) - _MUTABLE
        if unknown:
            raise ValueError(f"not a mutable turn column: {sorted(unknown)}")
        d = self._d
        names = sorted(changes)
        values = [
            d.js(changes[n]) if n in _JSON else d.ts(changes[n]) if n in _TIMES else changes[n] for n in names
        ]
        self._x(
            f"UPDATE turns SET {', '.join(f'{n} = ?' for n in names)} WHERE workspace_id = ? AND id = ?",
            (*values, self._ws, turn_id),
        )

    def list(
        self,
        *,
        before_id: str | None = None,
        limit: int = 50,
        statuses: Iterable[str] | None = None,
        author_key: str | None = None,
        author: tuple[str, str] | None = None,
        note_ids: Iterable[str] | None = None,
        activity: bool = False,
        waiting: bool = False,
    ) -> list[TurnRow]:
        """Newest first (keyset on id). ``activity``: landed on an agent's authority, not yet
        marked reviewed, not reverted — the Agent activity queue. ``waiting``: with blocks or
        ops still waiting for a decision."""
        where, params = ["workspace_id = ?"], [self._ws]
        if before_id is not None:
            where.append("id < ?")
            params.append(before_id)
        if statuses is not None:
            where.append(self._d.in_ids("status"))
            params.append(self._d.ids(statuses))
        if author_key is not None:
            where.append("author_key = ?")
            params.append(author_key)
        if author is not None:
            where += ["author_kind = ?", "author_id = ?"]
            params += list(author)
        if note_ids is not None:
            where.append(self._d.in_ids("note_id"))
            params.append(self._d.ids(note_ids))
        if activity:
            where += ["authority IS NOT NULL", "reviewed_at IS NULL", "status <> 'reverted'"]
        if waiting:
            where.append("(pending_blocks <> '[]' OR pending_ops <> '[]')")
        params.append(int(limit))
        rows = self._x(
            f"SELECT {_TURN_COLUMNS} FROM turns WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?", params
        ).fetchall()
        return [self._turn(r) for r in rows]

    def _turn(self, r: Sequence[Any]) -> TurnRow:
        d = self._d
        return TurnRow(
            id=r[0], note_id=r[1], status=r[2], author_kind=r[3], author_id=r[4], author_key=r[5], token_id=r[6],
            session_id=r[7], origin=r[8], idempotency_key=r[9], request_hash=r[10], base_frontier=r[11],
            proposal_update=bytes(r[12]), ops=d.js_out(r[13]), source_block_ids=d.js_out(r[14]),
            diffs=d.js_out(r[15]), pending_blocks=d.js_out(r[16]), pending_ops=d.js_out(r[17]),
            landed_blocks=d.js_out(r[18]), accepted_ops=d.js_out(r[19]), authority=r[20],
            reviewed_at=d.ts_out(r[21]), reviewed_by=r[22], created_at=d.ts_out(r[23]), updated_at=d.ts_out(r[24]),
            proposed_note=None if r[25] is None else d.js_out(r[25]),
        )

    # ------------------------------------------------------------------ sources

    def insert_sources(self, turn_id: str, citations: Iterable[tuple[str, str, str]]) -> None:
        """``(block id, source note id, source block id)`` for each citation the turn declares."""
        self._tx._w()
        self._tx._many(
            "INSERT INTO turn_sources (workspace_id, turn_id, block_id, source_note_id, source_block_id)"
            " VALUES (?, ?, ?, ?, ?)",
            [(self._ws, turn_id, block, note, source) for block, note, source in citations],
        )

    def mark_sources_landed(self, turn_id: str, block_ids: Iterable[str], at: datetime) -> None:
        self._tx._w()
        self._x(
            "UPDATE turn_sources SET landed_at = ? WHERE workspace_id = ? AND turn_id = ? AND landed_at IS NULL"
            f" AND {self._d.in_ids('block_id')}",
            (self._d.ts(at), self._ws, turn_id, self._d.ids(block_ids)),
        )

    def sources_of(self, turn_id: str) -> list[tuple[str, str, str]]:
        rows = self._x(
            "SELECT block_id, source_note_id, source_block_id FROM turn_sources WHERE workspace_id = ?"
            " AND turn_id = ? ORDER BY block_id, source_block_id",
            (self._ws, turn_id),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def landed_from(self, source_block_id: str) -> list[SourceUse]:
        """Every block that landed citing ``source_block_id``, in any note."""
        rows = self._x(
            "SELECT s.turn_id, t.note_id, s.block_id, s.source_note_id, s.source_block_id, s.landed_at, t.status"
            " FROM turn_sources s JOIN turns t ON t.id = s.turn_id"
            " WHERE s.workspace_id = ? AND t.workspace_id = ? AND s.source_block_id = ? AND s.landed_at IS NOT NULL"
            " ORDER BY s.landed_at, s.turn_id, s.block_id",
            (self._ws, self._ws, source_block_id),
        ).fetchall()
        return [SourceUse(r[0], r[1], r[2], r[3], r[4], self._d.ts_out(r[5]), r[6]) for r in rows]

    def notes_of_blocks(self, block_ids: Iterable[str]) -> dict[str, str]:
        """block id -> note id, for the blocks that exist in this workspace."""
        ids = list(block_ids)
        if not ids:
            return {}
        rows = self._x(
            f"SELECT block_id, note_id FROM blocks WHERE workspace_id = ? AND {self._d.in_ids('block_id')}",
            (self._ws, self._d.ids(ids)),
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    def retract(self, block_id: str, note_id: str, reason: str, by: str, at: datetime) -> None:
        """Mark a source block retracted (the first retraction stands)."""
        self._tx._w()
        self._x(
            "INSERT INTO source_retractions (workspace_id, block_id, note_id, reason, retracted_by, retracted_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, block_id) DO NOTHING",
            (self._ws, block_id, note_id, reason, by, self._d.ts(at)),
        )

    def retracted(self, block_ids: Iterable[str]) -> dict[str, datetime]:
        """block id -> when it was retracted, for those of ``block_ids`` that were."""
        ids = list(block_ids)
        if not ids:
            return {}
        rows = self._x(
            "SELECT block_id, retracted_at FROM source_retractions WHERE workspace_id = ?"
            f" AND {self._d.in_ids('block_id')}",
            (self._ws, self._d.ids(ids)),
        ).fetchall()
        return {r[0]: self._d.ts_out(r[1]) for r in rows}

    # ------------------------------------------------------------------ audit log

    def append_event(self, e: TurnEventRow) -> None:
        self._tx._w()
        d = self._d
        self._x(
            "INSERT INTO turn_events (workspace_id, turn_id, note_id, action, actor_kind, actor_id, token_id,"
            " review_state, block_ids, op_indexes, frontier_before, frontier_after, provenance_before, effects, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self._ws, e.turn_id, e.note_id, e.action, e.actor_kind, e.actor_id, e.token_id, e.review_state,
                d.js(list(e.block_ids)), d.js(list(e.op_indexes)), e.frontier_before, e.frontier_after,
                d.js(dict(e.provenance_before or {})), d.js(dict(e.effects or {})), d.ts(e.at),
            ),
        )

    def events(self, *, turn_id: str | None = None, actions: Iterable[str] | None = None,
               limit: int = 1000) -> list[TurnEventRow]:
        where, params = ["workspace_id = ?"], [self._ws]
        if turn_id is not None:
            where.append("turn_id = ?")
            params.append(turn_id)
        if actions is not None:
            where.append(self._d.in_ids("action"))
            params.append(self._d.ids(actions))
        params.append(int(limit))
        rows = self._x(
            "SELECT seq, turn_id, note_id, action, actor_kind, actor_id, token_id, review_state, block_ids,"
            " op_indexes, frontier_before, frontier_after, provenance_before, effects, at FROM turn_events"
            f" WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",
            params,
        ).fetchall()
        d = self._d
        return [
            TurnEventRow(
                seq=int(r[0]), turn_id=r[1], note_id=r[2], action=r[3], actor_kind=r[4], actor_id=r[5], token_id=r[6],
                review_state=r[7], block_ids=tuple(d.js_out(r[8])), op_indexes=tuple(d.js_out(r[9])),
                frontier_before=r[10], frontier_after=r[11], provenance_before=d.js_out(r[12]),
                effects=d.js_out(r[13]), at=d.ts_out(r[14]),
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ session reads

    def record_read(self, credential: str, session_id: str, note_id: str, frontier: str,
                    blocks: Sequence[tuple[str, str]], at: datetime) -> None:
        self._tx._w()
        d = self._d
        self._x(
            "INSERT INTO session_reads (workspace_id, credential, session_id, note_id, frontier, blocks, read_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, credential, note_id, frontier)"
            " DO UPDATE SET session_id = excluded.session_id, read_at = excluded.read_at",
            (self._ws, credential, session_id, note_id, frontier, d.js([list(b) for b in blocks]), d.ts(at)),
        )

    def prune_reads(self, credential: str, *, older_than: datetime, keep: int) -> None:
        """Drop reads older than ``older_than`` and all but the newest ``keep`` of this credential's."""
        self._tx._w()
        d = self._d
        self._x(
            "DELETE FROM session_reads WHERE workspace_id = ? AND credential = ? AND read_at < ?",
            (self._ws, credential, d.ts(older_than)),
        )
        self._x(
            "DELETE FROM session_reads WHERE workspace_id = ? AND credential = ? AND read_at < ("
            " SELECT read_at FROM session_reads WHERE workspace_id = ? AND credential = ?"
            " ORDER BY read_at DESC LIMIT 1 OFFSET ?)",
            (self._ws, credential, self._ws, credential, int(keep) - 1),
        )

    def reads(self, credential: str, *, since: datetime, limit: int) -> list[ReadRow]:
        rows = self._x(
            "SELECT note_id, frontier, blocks, read_at FROM session_reads WHERE workspace_id = ? AND credential = ?"
            " AND read_at >= ? ORDER BY read_at DESC LIMIT ?",
            (self._ws, credential, self._d.ts(since), int(limit)),
        ).fetchall()
        d = self._d
        return [ReadRow(r[0], r[1], [(b[0], b[1]) for b in d.js_out(r[2])], d.ts_out(r[3])) for r in rows]
