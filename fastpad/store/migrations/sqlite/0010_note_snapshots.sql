-- Version 10: a note's Loro snapshot moves to its own table, and the recency
-- strategy gets an index.
--
-- The snapshot (kilobytes) sat in the note row before archived_at, trashed_at
-- and updated_at, so every read of those columns — search joins hundreds of
-- candidates to their notes for them, the structured query filters on them —
-- walked the snapshot's overflow pages. Only a note's writes and document
-- loads read the snapshot; now only they touch it.
-- `blocks_authored` answers "the caller's latest block in this note" (the
-- recency strategy) from the index alone.

CREATE TABLE note_snapshots (
    note_id       TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    workspace_id  TEXT NOT NULL,
    snapshot      BLOB NOT NULL                  -- Loro snapshot after the note's last write
);
INSERT INTO note_snapshots (note_id, workspace_id, snapshot) SELECT id, workspace_id, snapshot FROM notes;
ALTER TABLE notes DROP COLUMN snapshot;

CREATE INDEX blocks_authored ON blocks (note_id, author_id, written_at, workspace_id);
