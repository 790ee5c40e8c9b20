-- Version 9: imports, their ledgers, the ids they minted and the attachments they
-- stored. See sqlite/0009_imports.sql for what each column means.

CREATE TABLE imports (
    id                text PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces(id),
    status            text NOT NULL CHECK (status IN ('uploading', 'queued', 'running', 'completed', 'cancelled',
                                                      'failed')),
    source            text,
    label             text NOT NULL DEFAULT '',
    archive_bytes     bigint,
    received_bytes    bigint NOT NULL DEFAULT 0,
    cancel_requested  boolean NOT NULL DEFAULT false,
    progress          jsonb NOT NULL DEFAULT '{}',
    summary           jsonb,
    problem           jsonb,
    created_by_kind   text NOT NULL,
    created_by_id     text NOT NULL,
    token_id          text,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    started_at        timestamptz,
    finished_at       timestamptz
);
CREATE INDEX imports_workspace ON imports (workspace_id, id);

CREATE TABLE import_ledger (
    workspace_id  text NOT NULL,
    import_id     text NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
    seq           integer NOT NULL,
    item          text NOT NULL,
    kind          text NOT NULL,
    status        text NOT NULL,
    reason        text,
    detail        text NOT NULL DEFAULT '',
    note_id       text,
    target        text,
    count         integer,
    PRIMARY KEY (import_id, seq)
);

CREATE TABLE import_items (
    workspace_id  text NOT NULL,
    item_path     text NOT NULL,
    digest        text NOT NULL,
    note_id       text NOT NULL,
    block_ids     jsonb NOT NULL DEFAULT '[]',
    import_id     text NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, item_path, digest)
);

CREATE TABLE attachments (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    sha256        text NOT NULL,
    media_type    text NOT NULL,
    name          text NOT NULL,
    size          bigint NOT NULL,
    content       bytea NOT NULL,
    import_id     text,
    created_at    timestamptz NOT NULL,
    UNIQUE (workspace_id, sha256)
);

-- Workspace-scoped: forced row-level security, the same policy as every other table.
-- (The application role's grants come from the bootstrap's GRANT … ON ALL TABLES.)
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['imports', 'import_ledger', 'import_items', 'attachments']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY workspace_isolation ON %I '
            'USING (workspace_id = current_setting(''app.workspace_id'', true)) '
            'WITH CHECK (workspace_id = current_setting(''app.workspace_id'', true))', t);
    END LOOP;
END
$$;
