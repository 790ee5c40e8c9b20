-- Version 16: published notes.
--
-- A row here makes a note readable by anyone at /n/{id}. The anonymous route
-- knows only the note id, so this is the one lookup by note id across
-- workspaces (Store.published_workspace); a note that is not here — never
-- published, unpublished, trashed (trashing unpublishes) or purged — answers
-- the same 404 after the same single lookup.

CREATE TABLE published_notes (
    note_id       TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    published_by  TEXT NOT NULL,
    published_at  TEXT NOT NULL
);
CREATE INDEX published_notes_workspace ON published_notes (workspace_id, note_id);
