"""The store's half of the single write path: ``WorkspaceTx.write_note`` (mixed into
``WorkspaceTx``) applies one committed write — op log, note row, block projection (and with it
the lexical index), change feed — in the caller's transaction. ``NoteService._commit``
(fastpad/knowledge/note_core.py) is its one caller outside tests and runs the link, search and
property steps after it in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from fastpad.errors import Conflict, NotFound, StaleFrontier
from fastpad.store.note_reads import NoteReads
from fastpad.store.records import UNCHANGED, Actor, BlockEdits, BlockRow, NoteWrite

if TYPE_CHECKING:
    from fastpad.store.feed import FeedLog

_PERSONS_OWN = ("human_typed", "human_accepted")  # a title no write stamped (the column defaults)

# One block row rewritten (content and provenance, with its last writer), and one whose
# provenance alone changed (a review keeps the writer): shared by both projection paths.
# New text comes with its lexical text (migration 21), or with none (NULL: found by no word until
# the write path's search step fills it), never with the old one.
_UPDATE_BLOCK = (
    "UPDATE blocks SET position = ?, type = ?, text = ?, attrs = ?, origin = ?, review_state = ?,"
    " lexical_text = ?,"
    " updated_at = ?, author_kind = ?, author_id = ?, author_token_id = ?, written_at = ?"
    " WHERE workspace_id = ? AND note_id = ? AND block_id = ?"
)
_REVIEW_BLOCK = (
    "UPDATE blocks SET position = ?, origin = ?, review_state = ?, updated_at = ?"
    " WHERE workspace_id = ? AND note_id = ? AND block_id = ?"
)


class NoteWrites(NoteReads):
    """The note row, its snapshot, op log and block projection, written together."""

    feed: FeedLog  # WorkspaceTx.feed: each write appends its change

    # ------------------------------------------------------------------ notes: the single write path

    def write_note(self, w: NoteWrite, *, previous_blocks: list[BlockRow] | None = None,
                   lexical: Callable[[str], str] | None = None) -> int:
        """Apply one committed write: op log, note row, block projection (and
        with it the lexical index), change feed — all in this transaction.
        Returns the change-feed seq. ``previous_blocks`` is the projection the
        caller read in this transaction, if it has it (saves a read).
        ``lexical`` maps a text to what the lexical index may hold of it (the write
        path's: the text less its secrets); without it a written text or title is
        found by no word until the search step fills it (migration 21).

        Raises NotFound for a missing note, StaleFrontier when the stored
        frontier is not ``w.expected_frontier``, and Conflict when a create's note id
        is taken; the caller's transaction then rolls back with nothing written.
        """
        self._w()
        d = self._d
        at = d.ts(w.at)
        if w.kind == "create":
            if w.snapshot is None or w.frontier is None:
                raise ValueError("a create needs a snapshot and a frontier")
            seq = 1 if w.update is not None else 0
            # A note id is unique across the deployment, and a client may choose one (a note adopted
            # from a browser): one held by any workspace — this transaction cannot see the others' —
            # inserts nothing here, and is a typed Conflict rather than an integrity error.
            inserted = self._x(
                "INSERT INTO notes (id, workspace_id, title, lexical_title, title_origin, title_review_state,"
                " property_provenance, types, properties, frontier, op_seq, created_by_kind, created_by_id,"
                " archived_at, trashed_at, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
                (
                    w.note_id, self.workspace_id, w.title or "", None if lexical is None else lexical(w.title or ""),
                    *(w.title_provenance or _PERSONS_OWN), d.js(_pairs_out(w.property_provenance or {})),
                    d.js(list(w.types or ())), d.js(dict(w.properties or {})), w.frontier, seq, w.actor.kind,
                    w.actor.id, at, at,
                ),
            ).fetchone()
            if inserted is None:
                raise Conflict(detail=f"the note id {w.note_id} is taken: choose another",
                               extra={"reason": "id_taken", "note_id": w.note_id})
            self._x("INSERT INTO note_snapshots (note_id, workspace_id, snapshot) VALUES (?, ?, ?)",
                    (w.note_id, self.workspace_id, w.snapshot))
            previous_blocks = []
        else:
            if w.expected_frontier is None:
                raise ValueError("an update needs expected_frontier")
            sets, params = ["updated_at = ?"], [at]
            if w.snapshot is not None:
                sets.append("frontier = ?")
                params.append(w.frontier)
            if w.title is not None:
                sets.append("title = ?, lexical_title = ?")
                params += [w.title, None if lexical is None else lexical(w.title)]
            if w.title_provenance is not None:
                sets.append("title_origin = ?, title_review_state = ?")
                params.extend(w.title_provenance)
            if w.property_provenance is not None:
                sets.append("property_provenance = ?")
                params.append(d.js(_pairs_out(w.property_provenance)))
            if w.types is not None:
                sets.append("types = ?")
                params.append(d.js(list(w.types)))
            if w.properties is not None:
                sets.append("properties = ?")
                params.append(d.js(dict(w.properties)))
            if w.update is not None:
                sets.append("op_seq = op_seq + 1")
            if w.archived_at is not UNCHANGED:
                sets.append("archived_at = ?")
                params.append(d.ts(w.archived_at))
            if w.trashed_at is not UNCHANGED:
                sets.append("trashed_at = ?")
                params.append(d.ts(w.trashed_at))
            row = self._x(
                f"UPDATE notes SET {', '.join(sets)} WHERE workspace_id = ? AND id = ? AND frontier = ?"
                " RETURNING op_seq",
                (*params, self.workspace_id, w.note_id, w.expected_frontier),
            ).fetchone()
            if row is None:
                current = self.note(w.note_id)
                if current is None:
                    raise NotFound(detail=f"note {w.note_id} not found")
                raise StaleFrontier(
                    detail="the note changed since that frontier was read",
                    extra={"expected_frontier": w.expected_frontier, "current_frontier": current.frontier},
                )
            seq = int(row[0])
            if w.snapshot is not None:
                self._x("UPDATE note_snapshots SET snapshot = ? WHERE workspace_id = ? AND note_id = ?",
                        (w.snapshot, self.workspace_id, w.note_id))
        if w.update is not None:
            self._x(
                "INSERT INTO note_updates (workspace_id, note_id, seq, kind, payload, peer_id, frontier,"
                " principal_kind, principal_id, token_id, origin, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.workspace_id, w.note_id, seq, w.kind, w.update, w.peer_id, w.frontier or w.expected_frontier,
                    w.actor.kind, w.actor.id, w.actor.token_id, w.actor.origin, at,
                ),
            )
        if w.blocks is not None:
            touched = self._project(w.note_id, w.blocks, previous_blocks, at, w.actor, lexical)
        elif w.block_edits is not None:
            touched = self._project_edits(w.note_id, w.block_edits, at, w.actor, lexical)
        else:
            touched = []
        return self.feed.append(w.kind, at=w.at, actor=w.actor, note_id=w.note_id, block_ids=touched)

    def _project_edits(self, note_id: str, edits: BlockEdits, at: Any, author: Actor,
                       lexical: Callable[[str], str] | None) -> list[str]:
        """``_project`` for a write that names the blocks it changed (``BlockEdits``): the
        same statements, for those rows only. Returns what ``_project`` would."""
        d, ws = self._d, self.workspace_id
        before = {b.block_id: b for b in edits.previous}
        by = (author.kind, author.id, author.token_id, at)
        updates, reviews, touched = [], [], []
        for b in edits.rows:
            old = before.get(b.block_id)
            if old is None or old.position != b.position:
                raise ValueError("block edits change stored blocks in place")
            if (old.type, old.text, old.attrs) != (b.type, b.text, b.attrs):
                updates.append((b.position, b.type, b.text, d.js(b.attrs), b.origin, b.review_state,
                                None if lexical is None else lexical(b.text), at, *by, ws, note_id, b.block_id))
            elif (old.origin, old.review_state) != (b.origin, b.review_state):
                reviews.append((b.position, b.origin, b.review_state, at, ws, note_id, b.block_id))
            else:
                continue
            touched.append(b.block_id)
        self._many(_UPDATE_BLOCK, updates)
        self._many(_REVIEW_BLOCK, reviews)
        return touched

    def _project(
        self, note_id: str, blocks: list[BlockRow], previous: list[BlockRow] | None, at: Any, author: Actor,
        lexical: Callable[[str], str] | None = None,
    ) -> list[str]:
        """Bring the block projection to ``blocks`` touching only rows that changed
        (the lexical index follows every row change in the same statement).
        A block whose content changed records ``author`` as its last writer; a
        change of provenance alone (a review) keeps the writer. Returns the ids
        of the blocks inserted, changed or deleted (a position shift is not a change)."""
        d, ws = self._d, self.workspace_id
        before = {b.block_id: b for b in (previous if previous is not None else self.blocks(note_id))}
        after_ids = {b.block_id for b in blocks}
        if len(after_ids) != len(blocks):
            raise ValueError("a block id appears twice in one note")
        deleted = [block_id for block_id in before if block_id not in after_ids]
        self._many(
            "DELETE FROM blocks WHERE workspace_id = ? AND note_id = ? AND block_id = ?",
            [(ws, note_id, block_id) for block_id in deleted],
        )
        inserts, updates, reviews, moves, touched = [], [], [], [], []
        by = (author.kind, author.id, author.token_id, at)
        for position, b in enumerate(blocks):
            old = before.get(b.block_id)
            if old is None:
                inserts.append((ws, note_id, b.block_id, position, b.type, b.text,
                                None if lexical is None else lexical(b.text), d.js(b.attrs), b.origin,
                                b.review_state, at, *by))
            elif (old.type, old.text, old.attrs) != (b.type, b.text, b.attrs):
                updates.append((position, b.type, b.text, d.js(b.attrs), b.origin, b.review_state,
                                None if lexical is None else lexical(b.text), at, *by, ws, note_id, b.block_id))
            elif (old.origin, old.review_state) != (b.origin, b.review_state):
                reviews.append((position, b.origin, b.review_state, at, ws, note_id, b.block_id))
            else:
                if old.position != position:
                    moves.append((position, ws, note_id, b.block_id))
                continue
            touched.append(b.block_id)
        self._many(
            "INSERT INTO blocks (workspace_id, note_id, block_id, position, type, text, lexical_text, attrs, origin,"
            " review_state, updated_at, author_kind, author_id, author_token_id, written_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            inserts,
        )
        self._many(_UPDATE_BLOCK, updates)
        self._many(_REVIEW_BLOCK, reviews)
        self._many(
            "UPDATE blocks SET position = ? WHERE workspace_id = ? AND note_id = ? AND block_id = ?", moves
        )
        return touched + deleted


def _pairs_out(provenance: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """A property provenance map as ``notes.property_provenance`` holds it: name -> "origin|review"."""
    return {name: f"{origin}|{review}" for name, (origin, review) in provenance.items()}
