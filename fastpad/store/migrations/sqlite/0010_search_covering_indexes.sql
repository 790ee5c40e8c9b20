-- Version 10: indexes that let search's hot reads skip the table rows.
--
-- A note row carries its Loro snapshot (kilobytes) before archived_at,
-- trashed_at and updated_at, so reading those three from the row walks the
-- snapshot's overflow pages: every search joins hundreds of candidates to
-- their notes for exactly those columns. `notes_live` holds them in the index
-- (it also serves every lookup `notes_workspace` served, which it replaces).
-- `blocks_authored` answers "the caller's latest block in this note" (the
-- recency strategy) from the index alone.

CREATE INDEX notes_live ON notes (workspace_id, id, trashed_at, archived_at, updated_at);
DROP INDEX notes_workspace;
CREATE INDEX blocks_authored ON blocks (note_id, author_id, written_at, workspace_id);
