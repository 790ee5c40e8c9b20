-- Version 16: published notes.
--
-- A row here makes a note readable by anyone at /n/{id}. The anonymous route
-- knows only the note id, so this is the one lookup by note id across
-- workspaces (fastpad_published_workspace); a note that is not here — never
-- published, unpublished, trashed (trashing unpublishes) or purged — answers
-- the same 404 after the same single lookup.

CREATE TABLE published_notes (
    note_id       text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    published_by  text NOT NULL,
    published_at  timestamptz NOT NULL
);
CREATE INDEX published_notes_workspace ON published_notes (workspace_id, note_id);

-- Enabled, not forced (as credential_index): the application role sees its own
-- workspace's rows; the lookup function below runs as the owner and takes one
-- exact note id, so it cannot enumerate.
ALTER TABLE published_notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON published_notes
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

CREATE FUNCTION fastpad_published_workspace(p_note_id text)
RETURNS TABLE (workspace_id text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT p.workspace_id FROM published_notes p WHERE p.note_id = p_note_id
$$;
REVOKE ALL ON FUNCTION fastpad_published_workspace(text) FROM PUBLIC;
