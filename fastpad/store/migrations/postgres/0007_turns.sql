-- Version 7: proposals (turns), their declared sources, the append-only audit log,
-- and what agent sessions read (for the cross-note copy guard).
-- See sqlite/0007_turns.sql for what each column means.

CREATE TABLE turns (
    id                text PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces(id),
    note_id           text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    status            text NOT NULL CHECK (status IN ('pending', 'accepted', 'partially_accepted', 'rejected',
                                                      'abandoned', 'reverted')),
    author_kind       text NOT NULL CHECK (author_kind IN ('agent', 'person')),
    author_id         text NOT NULL,
    author_key        text NOT NULL,
    token_id          text,
    session_id        text NOT NULL,
    origin            text NOT NULL,
    idempotency_key   text NOT NULL,
    request_hash      text NOT NULL,
    base_frontier     text NOT NULL,
    proposal_update   bytea NOT NULL,
    ops               jsonb NOT NULL,
    source_block_ids  jsonb NOT NULL DEFAULT '[]',
    diffs             jsonb NOT NULL,
    pending_blocks    jsonb NOT NULL DEFAULT '[]',
    pending_ops       jsonb NOT NULL DEFAULT '[]',
    landed_blocks     jsonb NOT NULL DEFAULT '[]',
    accepted_ops      jsonb NOT NULL DEFAULT '[]',
    authority         text CHECK (authority IN ('grant', 'auto_apply')),
    reviewed_at       timestamptz,
    reviewed_by       text,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    UNIQUE (workspace_id, author_key, idempotency_key)
);
CREATE INDEX turns_workspace ON turns (workspace_id, id);
CREATE INDEX turns_note ON turns (workspace_id, note_id);
CREATE INDEX turns_activity ON turns (workspace_id, authority, reviewed_at);

CREATE TABLE turn_sources (
    workspace_id     text NOT NULL,
    turn_id          text NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    block_id         text NOT NULL,
    source_note_id   text NOT NULL,
    source_block_id  text NOT NULL,
    landed_at        timestamptz,
    PRIMARY KEY (turn_id, block_id, source_block_id)
);
CREATE INDEX turn_sources_source ON turn_sources (workspace_id, source_block_id);

CREATE TABLE source_retractions (
    workspace_id  text NOT NULL,
    block_id      text NOT NULL,
    note_id       text NOT NULL,
    reason        text NOT NULL DEFAULT '',
    retracted_by  text NOT NULL,
    retracted_at  timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, block_id)
);

CREATE TABLE turn_events (
    seq                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id       text NOT NULL,
    turn_id            text NOT NULL,
    note_id            text NOT NULL,
    action             text NOT NULL CHECK (action IN ('propose', 'accept', 'auto_apply', 'reject', 'abandon',
                                                       'revert', 'mark_reviewed')),
    actor_kind         text NOT NULL,
    actor_id           text NOT NULL,
    token_id           text,
    review_state       text,
    block_ids          jsonb NOT NULL DEFAULT '[]',
    op_indexes         jsonb NOT NULL DEFAULT '[]',
    frontier_before    text,
    frontier_after     text,
    provenance_before  jsonb NOT NULL DEFAULT '{}',
    at                 timestamptz NOT NULL
);
CREATE INDEX turn_events_turn ON turn_events (workspace_id, turn_id, seq);

-- Append-only, for the application role and the owner alike (TRUNCATE, an operator's
-- tool, is not a row change and is not stopped).
CREATE FUNCTION fastpad_turn_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'turn_events is append-only';
END
$$;
CREATE TRIGGER turn_events_append_only BEFORE UPDATE OR DELETE ON turn_events
    FOR EACH ROW EXECUTE FUNCTION fastpad_turn_events_append_only();

CREATE TABLE session_reads (
    workspace_id  text NOT NULL,
    credential    text NOT NULL,
    session_id    text NOT NULL,
    note_id       text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    frontier      text NOT NULL,
    blocks        jsonb NOT NULL,
    read_at       timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, credential, note_id, frontier)
);
CREATE INDEX session_reads_recent ON session_reads (workspace_id, credential, read_at);

-- Workspace-scoped: forced row-level security, the same policy as every other table.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['turns', 'turn_sources', 'source_retractions', 'turn_events', 'session_reads']
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
