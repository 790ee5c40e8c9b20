-- Version 25: a person's Inbox of mentions (see sqlite/0025 for what a row is).

CREATE TABLE mentions (
    id                  text PRIMARY KEY,
    workspace_id        text NOT NULL REFERENCES workspaces(id),
    person_id           text NOT NULL REFERENCES people(id),
    note_id             text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    block_id            text NOT NULL,
    mentioned_by_kind   text NOT NULL CHECK (mentioned_by_kind IN ('person', 'agent')),
    mentioned_by_id     text NOT NULL,
    token_id            text,
    origin              text NOT NULL,
    created_at          timestamptz NOT NULL,
    read_at             timestamptz,
    UNIQUE (workspace_id, person_id, block_id)
);
CREATE INDEX mentions_inbox ON mentions (workspace_id, person_id, id);
CREATE INDEX mentions_note ON mentions (note_id);

ALTER TABLE mentions ENABLE ROW LEVEL SECURITY;
ALTER TABLE mentions FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON mentions
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));
