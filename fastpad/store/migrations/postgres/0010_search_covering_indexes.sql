-- Version 10: indexes that let search's hot reads skip the table rows.
--
-- PostgreSQL keeps a note's snapshot out of line (TOAST), so the note columns
-- search filters on are cheap to reach already; `notes_live` still lets the
-- planner answer those joins with index-only scans, like SQLite's version 10.
-- `blocks_authored` answers "the caller's latest block in this note" (the
-- recency strategy) without visiting every block of the note.

CREATE INDEX notes_live ON notes (workspace_id, id) INCLUDE (trashed_at, archived_at, updated_at);
DROP INDEX notes_workspace;
CREATE INDEX blocks_authored ON blocks (note_id, author_id, written_at);
