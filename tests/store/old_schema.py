"""Notes as a version-1 database held them, written with that version's SQL.

The write path always targets the latest schema, so it cannot fill an old
database; upgrade tests seed one with these statements instead (version-1
columns only, through the store's own transaction, so PostgreSQL's
row-level security applies as usual).
"""

from __future__ import annotations

from datetime import datetime

from fastpad.notes import Block, NoteDocument, NoteMeta, new_id
from fastpad.store import Store


def old_note(store: Store, workspace_id: str, person_id: str, *, title: str, texts: list[str], at: datetime,
             archived: bool = False) -> tuple[str, list[str]]:
    """A note, its blocks and its change-feed rows ("create", then "archive" if asked): (note id, block ids).
    From version 10 on, the snapshot goes where version 10 moved it (``note_snapshots``)."""
    doc = NoteDocument.new(NoteMeta(title), [Block(None, "paragraph", t) for t in texts])
    note_id = new_id()
    snapshots_apart = store.schema_version() >= 10
    with store.write(workspace_id) as tx:
        d = tx._d
        tx._x(
            "INSERT INTO notes (id, workspace_id, title, types, properties, frontier, op_seq,"
            " created_by_kind, created_by_id, archived_at, created_at, updated_at"
            + (")" if snapshots_apart else ", snapshot)") +
            " VALUES (?, ?, ?, ?, ?, ?, 0, 'person', ?, ?, ?, ?" + (")" if snapshots_apart else ", ?)"),
            (note_id, workspace_id, title, d.js([]), d.js({}), doc.frontier(), person_id,
             d.ts(at) if archived else None, d.ts(at), d.ts(at), *(() if snapshots_apart else (doc.snapshot(),))),
        )
        if snapshots_apart:
            tx._x("INSERT INTO note_snapshots (note_id, workspace_id, snapshot) VALUES (?, ?, ?)",
                  (note_id, workspace_id, doc.snapshot()))
        for position, block in enumerate(doc.blocks()):
            tx._x(
                "INSERT INTO blocks (workspace_id, note_id, block_id, position, type, text, attrs, origin,"
                " review_state, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'human_typed', 'human_accepted', ?)",
                (workspace_id, note_id, block.id, position, block.type, block.text, d.js({}), d.ts(at)),
            )
        for kind in ("create", "archive") if archived else ("create",):
            seq = tx._x("UPDATE workspaces SET feed_seq = feed_seq + 1 WHERE id = ? RETURNING feed_seq",
                        (workspace_id,)).fetchone()[0]
            tx._x("INSERT INTO change_feed (workspace_id, seq, note_id, kind, at) VALUES (?, ?, ?, ?, ?)",
                  (workspace_id, seq, note_id, kind, d.ts(at)))
    return note_id, [b.id for b in doc.blocks()]
