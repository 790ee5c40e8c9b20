-- Version 10: a note's Loro snapshot moves to its own table, and the recency
-- strategy gets an index. See sqlite/0010_note_snapshots.sql for why; on
-- PostgreSQL the snapshot was already kept out of line (TOAST), so this keeps
-- the two schemas one shape.

CREATE TABLE note_snapshots (
    note_id       text PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    workspace_id  text NOT NULL,
    snapshot      bytea NOT NULL
);
INSERT INTO note_snapshots (note_id, workspace_id, snapshot) SELECT id, workspace_id, snapshot FROM notes;
ALTER TABLE notes DROP COLUMN snapshot;

-- Workspace-scoped: forced row-level security, the same policy as every other table.
-- (The application role's grants come from the bootstrap's GRANT … ON ALL TABLES.)
ALTER TABLE note_snapshots ENABLE ROW LEVEL SECURITY;
ALTER TABLE note_snapshots FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON note_snapshots
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

CREATE INDEX blocks_authored ON blocks (note_id, author_id, written_at);
