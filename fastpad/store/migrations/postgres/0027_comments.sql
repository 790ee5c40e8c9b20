-- Version 27: comments on notes, and Inbox entries that point at a comment (see sqlite/0027).

CREATE TABLE comments (
    id                text PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces(id),
    note_id           text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    thread_id         text NOT NULL,
    block_id          text NOT NULL,
    range_start       bytea,
    range_end         bytea,
    quote             text,
    body              text NOT NULL,
    author_kind       text NOT NULL CHECK (author_kind IN ('person', 'agent')),
    author_id         text NOT NULL,
    token_id          text,
    created_at        timestamptz NOT NULL,
    edited_at         timestamptz,
    deleted_at        timestamptz,
    resolved_at       timestamptz,
    resolved_by_id    text
);
CREATE INDEX comments_note ON comments (workspace_id, note_id, thread_id, id);

ALTER TABLE comments ENABLE ROW LEVEL SECURITY;
ALTER TABLE comments FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON comments
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

ALTER TABLE mentions ADD COLUMN comment_id text REFERENCES comments(id) ON DELETE CASCADE;
ALTER TABLE mentions DROP CONSTRAINT mentions_workspace_id_person_id_block_id_key;
CREATE UNIQUE INDEX mentions_once_per_block ON mentions (workspace_id, person_id, block_id) WHERE comment_id IS NULL;
CREATE UNIQUE INDEX mentions_once_per_comment ON mentions (workspace_id, person_id, comment_id)
    WHERE comment_id IS NOT NULL;
