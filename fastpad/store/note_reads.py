"""Row methods of ``WorkspaceTx`` that read notes: note rows and keyset pages of them, the
block projection (whole, by id, by position, headings, blocks that can link), the op log,
and whose each title and property is (mixed into ``WorkspaceTx``; callers say
``tx.note(...)``, ``tx.blocks(...)``). Notes are written by note_writes.py alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fastpad.store.records import BlockRow, NameProvenance, NoteRow, OpLogEntry
from fastpad.store.tx_core import TxCore


class NoteReads(TxCore):
    """Note rows, the block projection and the op log, as this transaction sees them."""

    # ------------------------------------------------------------------ notes: reads

    _NOTE_COLUMNS = "id, title, types, properties, frontier, op_seq, archived_at, trashed_at, created_at, updated_at"

    def note(self, note_id: str, *, with_snapshot: bool = False, for_update: bool = False) -> NoteRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._x(
            f"SELECT {self._NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND id = ?{lock}", (self.workspace_id, note_id)
        ).fetchone()
        if row is None:
            return None
        snapshot = None
        if with_snapshot:
            # A statement of its own, after the lock: on PostgreSQL a writer that
            # waited for the note row must read the snapshot the previous writer
            # committed, which the locking statement's own view predates.
            snapshot = bytes(self._x("SELECT snapshot FROM note_snapshots WHERE workspace_id = ? AND note_id = ?",
                                     (self.workspace_id, note_id)).fetchone()[0])
        return self._note(row, snapshot)

    def name_provenance(self, note_ids: Iterable[str]) -> dict[str, NameProvenance]:
        """Whose each named note's title and properties are (notes it does not have are left out)."""
        wanted = sorted(set(note_ids))
        if not wanted:
            return {}
        rows = self._x(f"SELECT id, title_origin, title_review_state, property_provenance FROM notes"
                       f" WHERE workspace_id = ? AND {self._d.in_ids('id')}",
                       (self.workspace_id, self._d.ids(wanted))).fetchall()
        return {r[0]: NameProvenance((r[1], r[2]), {name: tuple(pair.split("|", 1))  # type: ignore[misc]
                                                    for name, pair in self._d.js_out(r[3]).items()})
                for r in rows}

    def list_notes(
        self,
        *,
        after_id: str | None = None,
        limit: int = 50,
        include_archived: bool = False,
        include_trashed: bool = False,
        note_ids: Iterable[str] | None = None,
        within_folder: tuple[str, str] | None = None,
    ) -> list[NoteRow]:
        """Keyset page of notes in id (creation) order, strictly after ``after_id``.
        ``within_folder``: (property, folder) — only notes whose text property is that
        '/'-separated folder or a folder beneath it."""
        where = ["workspace_id = ?"]
        params: list[Any] = [self.workspace_id]
        if after_id is not None:
            where.append("id > ?")
            params.append(after_id)
        if not include_archived:
            where.append("archived_at IS NULL")
        if not include_trashed:
            where.append("trashed_at IS NULL")
        if note_ids is not None:
            where.append(self._d.in_ids("id"))
            params.append(self._d.ids(note_ids))
        if within_folder is not None:
            key, folder = within_folder
            value = self._d.json_text("properties")
            where.append(f"({value} = ? OR substr({value}, 1, ?) = ?)")
            path = self._d.json_key(key)
            params += [path, folder, path, len(folder) + 1, folder + "/"]
        params.append(int(limit))
        rows = self._x(
            f"SELECT {self._NOTE_COLUMNS} FROM notes WHERE {' AND '.join(where)} ORDER BY id LIMIT ?", params
        ).fetchall()
        return [self._note(r) for r in rows]

    def existing_note_ids(self, note_ids: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(note_ids))
        if not ids:
            return set()
        rows = self._x(
            f"SELECT id FROM notes WHERE workspace_id = ? AND {self._d.in_ids('id')}",
            (self.workspace_id, self._d.ids(ids)),
        ).fetchall()
        return {r[0] for r in rows}

    def block_ids_held_elsewhere(self, block_ids: Iterable[str], note_id: str) -> set[str]:
        """Which of ``block_ids`` a note other than ``note_id`` holds (in the trash or not): block
        ids are unique across the workspace, so those cannot be given to ``note_id``'s blocks."""
        ids = sorted(set(block_ids))
        if not ids:
            return set()
        rows = self._x(
            f"SELECT DISTINCT block_id FROM blocks WHERE workspace_id = ? AND {self._d.in_ids('block_id')}"
            " AND note_id <> ?",
            (self.workspace_id, self._d.ids(ids), note_id),
        ).fetchall()
        return {r[0] for r in rows}

    _BLOCK_COLUMNS = "block_id, position, type, text, attrs, origin, review_state"

    def blocks(self, note_id: str) -> list[BlockRow]:
        return self._block_rows(note_id, "", ())

    def blocks_by_id(self, note_id: str, block_ids: Iterable[str]) -> list[BlockRow]:
        """Some of the note's blocks, in note order (ids it does not have are left out)."""
        wanted = sorted(set(block_ids))
        if not wanted:
            return []
        return self._block_rows(note_id, f" AND {self._d.in_ids('block_id')}", (self._d.ids(wanted),))

    def blocks_between(self, note_id: str, after: int, before: int | None) -> list[BlockRow]:
        """The note's blocks at positions strictly between ``after`` and ``before`` (None: to the end)."""
        if before is None:
            return self._block_rows(note_id, " AND position > ?", (after,))
        return self._block_rows(note_id, " AND position > ? AND position < ?", (after, before))

    def heading_blocks(self, note_id: str) -> list[BlockRow]:
        """The note's headings, in note order: its section structure, without the sections' text."""
        return self._block_rows(note_id, " AND type = 'heading'", ())

    def blocks_with_link_marks(self, note_id: str) -> list[BlockRow]:
        """The note's blocks whose text holds ``[[`` or ``@`` — every block that can link
        anywhere (``wikilinks.extract_links`` reads no other), in note order."""
        return self._block_rows(note_id, " AND (text LIKE ? OR text LIKE ?)", ("%[[%", "%@%"))

    def _block_rows(self, note_id: str, where: str, params: Sequence[Any]) -> list[BlockRow]:
        rows = self._x(
            f"SELECT {self._BLOCK_COLUMNS} FROM blocks WHERE workspace_id = ? AND note_id = ?{where} ORDER BY position",
            (self.workspace_id, note_id, *params),
        ).fetchall()
        return [BlockRow(r[0], r[1], r[2], r[3], self._d.js_out(r[4]), r[5], r[6]) for r in rows]

    def op_log(self, note_id: str, *, after_seq: int = 0) -> list[OpLogEntry]:
        rows = self._x(
            "SELECT seq, kind, payload, peer_id, frontier, principal_kind, principal_id, token_id, origin,"
            " created_at FROM note_updates WHERE workspace_id = ? AND note_id = ? AND seq > ? ORDER BY seq",
            (self.workspace_id, note_id, after_seq),
        ).fetchall()
        return [
            OpLogEntry(r[0], r[1], bytes(r[2]), r[3], r[4], r[5], r[6], r[7], r[8], self._d.ts_out(r[9]))
            for r in rows
        ]

    def frontier_after_last_write_besides(self, note_id: str, kind: str) -> str | None:
        """The note's frontier after its latest op-log write of any kind but ``kind`` (None: it has none)."""
        row = self._x(
            "SELECT frontier FROM note_updates WHERE workspace_id = ? AND note_id = ? AND kind <> ?"
            " ORDER BY seq DESC LIMIT 1",
            (self.workspace_id, note_id, kind),
        ).fetchone()
        return None if row is None else row[0]

    def _note(self, r: Sequence[Any], snapshot: bytes | None = None) -> NoteRow:
        d = self._d
        return NoteRow(
            id=r[0], title=r[1], types=tuple(d.js_out(r[2])), properties=d.js_out(r[3]), frontier=r[4],
            op_seq=int(r[5]), archived_at=d.ts_out(r[6]), trashed_at=d.ts_out(r[7]),
            created_at=d.ts_out(r[8]), updated_at=d.ts_out(r[9]),
            snapshot=snapshot,
        )
