-- Fastpad schema, PostgreSQL backend, version 1.
--
-- Isolation: every workspace-scoped table has ROW LEVEL SECURITY enabled and
-- FORCEd (so it binds the table owner too), with one policy comparing the row's
-- workspace with the transaction-local setting `app.workspace_id`. With no
-- setting, current_setting(..., true) is NULL (or '' once a transaction that set
-- it has ended), which equals no workspace id: a connection that did not say
-- which workspace it acts for sees zero rows and can write none. The
-- application connects as a non-owner login role created by the bootstrap
-- (fastpad/store/postgres.py), never as the owner.
--
-- Two tables are global rather than workspace-scoped and have RLS enabled but
-- not forced, so the owner-defined functions below can read them while the
-- application role sees only what the policies allow:
--   people            - a person exists once and joins several workspaces;
--   credential_index  - credential hash -> workspace, the one lookup that must
--                       happen before the workspace is known.
-- The application role reads credential_index only through
-- fastpad_resolve_credential(kind, hash): exact hash in, (workspace, id) out.
-- It cannot list the table, so it cannot enumerate workspaces or credentials;
-- everything else about the token (scopes, expiry, revocation) is then read
-- from `tokens` under the workspace's RLS policy.

CREATE TABLE workspaces (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    feed_seq    bigint NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL
);

CREATE TABLE people (
    id             text PRIMARY KEY,
    email          text NOT NULL UNIQUE,
    display_name   text NOT NULL DEFAULT '',
    password_hash  text,
    created_at     timestamptz NOT NULL
);

CREATE TABLE workspace_members (
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    person_id     text NOT NULL REFERENCES people(id),
    role          text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, person_id)
);
CREATE INDEX workspace_members_person ON workspace_members (person_id);

CREATE TABLE agents (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    name          text NOT NULL,
    created_by    text,
    created_at    timestamptz NOT NULL
);
CREATE INDEX agents_workspace ON agents (workspace_id, id);

CREATE TABLE tokens (
    id                     text PRIMARY KEY,
    workspace_id           text NOT NULL REFERENCES workspaces(id),
    token_hash             text NOT NULL UNIQUE,
    prefix                 text NOT NULL,
    label                  text NOT NULL DEFAULT '',
    kind                   text NOT NULL CHECK (kind IN ('agent', 'person')),
    agent_id               text REFERENCES agents(id),
    person_id              text REFERENCES people(id),
    scopes                 jsonb NOT NULL,
    note_ids               jsonb,
    auto_apply             boolean NOT NULL DEFAULT false,
    rate_limit_per_minute  integer NOT NULL,
    parent_id              text REFERENCES tokens(id),
    root_id                text NOT NULL,
    created_by_kind        text NOT NULL,
    created_by_id          text,
    expires_at             timestamptz NOT NULL,
    revoked_at             timestamptz,
    last_used_at           timestamptz,
    created_at             timestamptz NOT NULL,
    CHECK ((kind = 'agent' AND agent_id IS NOT NULL) OR (kind = 'person' AND person_id IS NOT NULL))
);
CREATE INDEX tokens_workspace ON tokens (workspace_id, id);
CREATE INDEX tokens_parent ON tokens (parent_id);

CREATE TABLE web_sessions (
    id             text PRIMARY KEY,
    workspace_id   text NOT NULL REFERENCES workspaces(id),
    person_id      text NOT NULL REFERENCES people(id),
    session_hash   text NOT NULL UNIQUE,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    last_seen_at   timestamptz NOT NULL,
    ended_at       timestamptz
);
CREATE INDEX web_sessions_workspace ON web_sessions (workspace_id, id);

CREATE TABLE credential_index (
    hash          text PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('token', 'session')),
    workspace_id  text NOT NULL,
    subject_id    text NOT NULL
);

CREATE TABLE notes (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL REFERENCES workspaces(id),
    title            text NOT NULL DEFAULT '',
    types            jsonb NOT NULL DEFAULT '[]',
    properties       jsonb NOT NULL DEFAULT '{}',
    snapshot         bytea NOT NULL,
    frontier         text NOT NULL,
    op_seq           bigint NOT NULL DEFAULT 0,
    created_by_kind  text,
    created_by_id    text,
    archived_at      timestamptz,
    trashed_at       timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX notes_workspace ON notes (workspace_id, id);

CREATE TABLE note_updates (
    workspace_id    text NOT NULL,
    note_id         text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    seq             bigint NOT NULL,
    kind            text NOT NULL,
    payload         bytea NOT NULL,
    peer_id         text,
    frontier        text NOT NULL,
    principal_kind  text NOT NULL,
    principal_id    text NOT NULL,
    token_id        text,
    origin          text NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (note_id, seq)
);

CREATE TABLE blocks (
    workspace_id  text NOT NULL,
    note_id       text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    block_id      text NOT NULL,
    position      integer NOT NULL,
    type          text NOT NULL,
    text          text NOT NULL,
    attrs         jsonb NOT NULL DEFAULT '{}',
    origin        text NOT NULL,
    review_state  text NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (note_id, block_id)
);
CREATE INDEX blocks_note_position ON blocks (note_id, position);

CREATE TABLE links (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL,
    source_note_id   text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    source_block_id  text,
    target_note_id   text NOT NULL,
    target_block_id  text,
    kind             text NOT NULL DEFAULT 'link',
    asserted         boolean NOT NULL DEFAULT true,
    evidence         jsonb NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL
);
CREATE INDEX links_source ON links (workspace_id, source_note_id);
CREATE INDEX links_target ON links (workspace_id, target_note_id);

CREATE TABLE idempotency_keys (
    workspace_id   text NOT NULL,
    principal_key  text NOT NULL,
    key            text NOT NULL,
    request_hash   text NOT NULL,
    status         integer NOT NULL,
    headers        jsonb NOT NULL DEFAULT '{}',
    body           bytea NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, principal_key, key)
);

CREATE TABLE change_feed (
    workspace_id  text NOT NULL,
    seq           bigint NOT NULL,
    note_id       text NOT NULL,
    kind          text NOT NULL,
    at            timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);

-- ---------------------------------------------------------------- row-level security

-- Workspace-scoped tables: forced, one policy each, fail closed.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['agents', 'tokens', 'web_sessions', 'notes', 'note_updates',
                             'blocks', 'links', 'idempotency_keys', 'change_feed']
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

-- A workspace's own row; and, while acting for a signed-in person
-- (`app.person_id`), the workspaces that person is a member of (the switcher).
ALTER TABLE workspaces ENABLE ROW LEVEL SECURITY;
ALTER TABLE workspaces FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON workspaces
    USING (id = current_setting('app.workspace_id', true)
           OR id IN (SELECT m.workspace_id FROM workspace_members m
                     WHERE m.person_id = current_setting('app.person_id', true)))
    WITH CHECK (id = current_setting('app.workspace_id', true));

ALTER TABLE workspace_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE workspace_members FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON workspace_members
    USING (workspace_id = current_setting('app.workspace_id', true)
           OR person_id = current_setting('app.person_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

-- people: global, enabled (not forced). Visible: yourself, and members of the
-- workspace being acted in. Inserting a person is allowed (membership is what grants access).
ALTER TABLE people ENABLE ROW LEVEL SECURITY;
CREATE POLICY people_visible ON people FOR SELECT
    USING (id = current_setting('app.person_id', true)
           OR id IN (SELECT m.person_id FROM workspace_members m
                     WHERE m.workspace_id = current_setting('app.workspace_id', true)));
CREATE POLICY people_insert ON people FOR INSERT WITH CHECK (true);
CREATE POLICY people_update ON people FOR UPDATE
    USING (id = current_setting('app.person_id', true)
           OR id IN (SELECT m.person_id FROM workspace_members m
                     WHERE m.workspace_id = current_setting('app.workspace_id', true)))
    WITH CHECK (true);

-- credential_index: enabled (not forced). No SELECT policy at all: the
-- application role can add an entry for the workspace it acts in, never read one.
ALTER TABLE credential_index ENABLE ROW LEVEL SECURITY;
CREATE POLICY credential_insert ON credential_index FOR INSERT
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

-- ---------------------------------------------------------------- pre-workspace lookups

-- Credential hash -> (workspace, credential id). SECURITY DEFINER: runs as the
-- owner, which credential_index (RLS not forced) lets through; takes the exact
-- hash only, so it cannot be used to enumerate. search_path is pinned.
CREATE FUNCTION fastpad_resolve_credential(p_kind text, p_hash text)
RETURNS TABLE (workspace_id text, subject_id text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT c.workspace_id, c.subject_id FROM credential_index c
    WHERE c.kind = p_kind AND c.hash = p_hash
$$;

-- Email -> (person id, password hash) for password sign-in, before any workspace is known.
CREATE FUNCTION fastpad_login_lookup(p_email text)
RETURNS TABLE (person_id text, password_hash text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT p.id, p.password_hash FROM people p WHERE p.email = p_email
$$;

REVOKE ALL ON FUNCTION fastpad_resolve_credential(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fastpad_login_lookup(text) FROM PUBLIC;
