"""Statements for imports: ``tx.imports``. The import row, its ledger, the ids it minted, and attachments.

Like the rest of the data-access layer, every statement adds ``workspace_id =
<the transaction's workspace>`` itself and takes values only as parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class ImportRow:
    id: str
    status: str  # uploading | queued | running | completed | cancelled | failed
    source: str | None
    label: str
    archive_bytes: int | None
    received_bytes: int
    cancel_requested: bool
    progress: dict[str, Any]
    summary: dict[str, Any] | None
    problem: dict[str, Any] | None
    created_by_kind: str
    created_by_id: str
    token_id: str | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True)
class LedgerEntry:
    """One stored ledger row (``seq`` orders the ledger)."""

    seq: int
    item: str
    kind: str
    status: str
    reason: str | None
    detail: str
    note_id: str | None
    target: str | None
    count: int | None


@dataclass(frozen=True)
class MintedIds:
    """The ids an import minted for one archive item."""

    item_path: str
    digest: str
    note_id: str
    block_ids: tuple[str, ...]


@dataclass(frozen=True)
class AttachmentRow:
    id: str
    sha256: str
    media_type: str
    name: str
    size: int
    content: bytes | None  # None when read without the bytes
    created_at: datetime


_IMPORT_COLUMNS = (
    "id, status, source, label, archive_bytes, received_bytes, cancel_requested, progress, summary, problem,"
    " created_by_kind, created_by_id, token_id, created_at, updated_at, started_at, finished_at"
)
_LEDGER_COLUMNS = "seq, item, kind, status, reason, detail, note_id, target, count"


class ImportTables:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d  # noqa: SLF001 - this module is part of the data-access layer
        self._x = tx._x  # noqa: SLF001
        self._many = tx._many  # noqa: SLF001
        self.workspace_id = tx.workspace_id

    # ------------------------------------------------------------------ imports

    def insert(self, row: ImportRow) -> None:
        self._tx._w()  # noqa: SLF001
        d = self._d
        self._x(
            f"INSERT INTO imports (workspace_id, {_IMPORT_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.workspace_id, row.id, row.status, row.source, row.label, row.archive_bytes, row.received_bytes,
             row.cancel_requested, d.js(row.progress), _js_or_null(d, row.summary), _js_or_null(d, row.problem),
             row.created_by_kind, row.created_by_id, row.token_id, d.ts(row.created_at), d.ts(row.updated_at),
             d.ts(row.started_at), d.ts(row.finished_at)),
        )

    def get(self, import_id: str, *, for_update: bool = False) -> ImportRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._x(f"SELECT {_IMPORT_COLUMNS} FROM imports WHERE workspace_id = ? AND id = ?{lock}",
                      (self.workspace_id, import_id)).fetchone()
        return self._import(row) if row else None

    def update(self, import_id: str, at: datetime, **fields: Any) -> None:
        """Set some of status, source, label, received_bytes, cancel_requested, progress, summary,
        problem, started_at, finished_at; ``updated_at`` becomes ``at`` (the runner's heartbeat)."""
        self._tx._w()  # noqa: SLF001
        d = self._d
        convert = {"progress": d.js, "summary": lambda v: _js_or_null(d, v), "problem": lambda v: _js_or_null(d, v),
                   "started_at": d.ts, "finished_at": d.ts}
        allowed = {"status", "source", "label", "received_bytes", "cancel_requested", *convert}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"not an import column: {sorted(unknown)}")
        names = sorted(fields)
        sets = ", ".join(f"{name} = ?" for name in names)
        values = [convert.get(name, lambda v: v)(fields[name]) for name in names]
        self._x(f"UPDATE imports SET {sets}{', ' if sets else ''}updated_at = ? WHERE workspace_id = ? AND id = ?",
                (*values, d.ts(at), self.workspace_id, import_id))

    def _import(self, r: Sequence[Any]) -> ImportRow:
        d = self._d
        return ImportRow(
            id=r[0], status=r[1], source=r[2], label=r[3], archive_bytes=None if r[4] is None else int(r[4]),
            received_bytes=int(r[5]), cancel_requested=bool(r[6]), progress=dict(d.js_out(r[7]) or {}),
            summary=d.js_out(r[8]) if r[8] is not None else None, problem=d.js_out(r[9]) if r[9] is not None else None,
            created_by_kind=r[10], created_by_id=r[11], token_id=r[12], created_at=d.ts_out(r[13]),
            updated_at=d.ts_out(r[14]), started_at=d.ts_out(r[15]), finished_at=d.ts_out(r[16]),
        )

    # ------------------------------------------------------------------ the ledger

    def append_ledger(self, import_id: str, rows: Sequence[LedgerEntry]) -> None:
        self._tx._w()  # noqa: SLF001
        self._many(
            f"INSERT INTO import_ledger (workspace_id, import_id, {_LEDGER_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(self.workspace_id, import_id, r.seq, r.item, r.kind, r.status, r.reason, r.detail, r.note_id, r.target,
              r.count) for r in rows],
        )

    def ledger(self, import_id: str, *, after_seq: int = 0, limit: int = 100) -> list[LedgerEntry]:
        rows = self._x(
            f"SELECT {_LEDGER_COLUMNS} FROM import_ledger WHERE workspace_id = ? AND import_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (self.workspace_id, import_id, int(after_seq), int(limit)),
        ).fetchall()
        return [LedgerEntry(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], None if r[8] is None else int(r[8]))
                for r in rows]

    # ------------------------------------------------------------------ minted ids

    def imported_notes(self, import_id: str) -> list[tuple[str, str]]:
        """``(item path, note id)`` of every note the import created or found unchanged, in
        ledger order (a link row names its note too, and is left out)."""
        rows = self._x(
            "SELECT item, note_id FROM import_ledger WHERE workspace_id = ? AND import_id = ? AND note_id IS NOT NULL"
            " AND kind <> 'link' AND status IN ('imported', 'unchanged') ORDER BY seq",
            (self.workspace_id, import_id),
        ).fetchall()
        return list(dict.fromkeys((r[0], r[1]) for r in rows))

    def minted(self, item_paths: Iterable[str]) -> list[MintedIds]:
        """Every id set minted for these item paths (any digest)."""
        paths = sorted(set(item_paths))
        if not paths:
            return []
        d = self._d
        rows = self._x(
            "SELECT item_path, digest, note_id, block_ids FROM import_items"
            f" WHERE workspace_id = ? AND {d.in_ids('item_path')}",
            (self.workspace_id, d.ids(paths)),
        ).fetchall()
        return [MintedIds(r[0], r[1], r[2], tuple(d.js_out(r[3]) or ())) for r in rows]

    def remember(self, import_id: str, minted: Sequence[MintedIds], at: datetime) -> None:
        """Record freshly minted ids; an item that already has ids keeps its first ones."""
        self._tx._w()  # noqa: SLF001
        d = self._d
        self._many(
            "INSERT INTO import_items (workspace_id, item_path, digest, note_id, block_ids, import_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, item_path, digest) DO NOTHING",
            [(self.workspace_id, m.item_path, m.digest, m.note_id, d.js(list(m.block_ids)), import_id, d.ts(at))
             for m in minted],
        )

    def extend_blocks(self, minted: Sequence[MintedIds]) -> None:
        """Remember block ids minted after the note id (an item gets its block ids when it is written)."""
        self._tx._w()  # noqa: SLF001
        d = self._d
        self._many(
            "UPDATE import_items SET block_ids = ? WHERE workspace_id = ? AND item_path = ? AND digest = ?",
            [(d.js(list(m.block_ids)), self.workspace_id, m.item_path, m.digest) for m in minted],
        )

    def existing_notes(self, note_ids: Iterable[str]) -> dict[str, str]:
        """Which of these notes exist (trashed or not): note id -> its title."""
        ids = sorted(set(note_ids))
        if not ids:
            return {}
        d = self._d
        rows = self._x(f"SELECT id, title FROM notes WHERE workspace_id = ? AND {d.in_ids('id')}",
                       (self.workspace_id, d.ids(ids))).fetchall()
        return {r[0]: r[1] for r in rows}

    def title_holders(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """Title key -> the notes, not in the trash, whose current title it is."""
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        d = self._d
        rows = self._x(
            "SELECT t.key, t.note_id FROM note_titles t JOIN notes n ON n.id = t.note_id"
            f" WHERE t.workspace_id = ? AND n.workspace_id = ? AND {d.in_ids('t.key')}"
            " AND t.retired_at IS NULL AND n.trashed_at IS NULL",
            (self.workspace_id, self.workspace_id, d.ids(wanted)),
        ).fetchall()
        found: dict[str, set[str]] = {}
        for key, note_id in rows:
            found.setdefault(key, set()).add(note_id)
        return found

    # ------------------------------------------------------------------ attachments

    def attachment_by_digest(self, sha256: str) -> AttachmentRow | None:
        row = self._x(
            "SELECT id, sha256, media_type, name, size, created_at FROM attachments"
            " WHERE workspace_id = ? AND sha256 = ?",
            (self.workspace_id, sha256),
        ).fetchone()
        return AttachmentRow(row[0], row[1], row[2], row[3], int(row[4]), None, self._d.ts_out(row[5])) if row else None

    def insert_attachment(self, row: AttachmentRow, import_id: str | None) -> None:
        self._tx._w()  # noqa: SLF001
        self._x(
            "INSERT INTO attachments (id, workspace_id, sha256, media_type, name, size, content, import_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, self.workspace_id, row.sha256, row.media_type, row.name, row.size, row.content, import_id,
             self._d.ts(row.created_at)),
        )

    def attachment_exists(self, attachment_id: str) -> bool:
        return self._x("SELECT 1 FROM attachments WHERE workspace_id = ? AND id = ?",
                       (self.workspace_id, attachment_id)).fetchone() is not None

    def attachment(self, attachment_id: str) -> AttachmentRow | None:
        row = self._x(
            "SELECT id, sha256, media_type, name, size, created_at, content FROM attachments"
            " WHERE workspace_id = ? AND id = ?",
            (self.workspace_id, attachment_id),
        ).fetchone()
        if row is None:
            return None
        return AttachmentRow(row[0], row[1], row[2], row[3], int(row[4]), bytes(row[6]), self._d.ts_out(row[5]))


def _js_or_null(d: Any, value: Mapping[str, Any] | None) -> Any:
    return None if value is None else d.js(dict(value))
