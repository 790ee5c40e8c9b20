-- Version 11: the OAuth 2.1 authorization server for interactive MCP clients.
-- See sqlite/0011_oauth.sql for what each table and column means.

CREATE TABLE oauth_clients (
    client_id      text PRIMARY KEY,
    client_name    text NOT NULL,
    redirect_uris  jsonb NOT NULL,
    grant_types    jsonb NOT NULL,
    created_at     timestamptz NOT NULL,
    approved_at    timestamptz
);
CREATE INDEX oauth_clients_unapproved ON oauth_clients (created_at) WHERE approved_at IS NULL;

-- Not workspace-scoped: a client registers before any workspace is known. Forced
-- row-level security still fails closed, keyed on the client id the caller holds,
-- as device_authorizations is on its secrets (0008): a transaction sees exactly
-- the client it names (`app.oauth_client_id`), plus — only when it sets
-- `app.oauth_unapproved_before` — the never-approved clients registered before
-- then, to sweep them. The application role cannot list the clients.
ALTER TABLE oauth_clients ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_clients FORCE ROW LEVEL SECURITY;
CREATE POLICY client_by_id ON oauth_clients
    USING (client_id = current_setting('app.oauth_client_id', true)
           OR (approved_at IS NULL
               AND created_at < NULLIF(current_setting('app.oauth_unapproved_before', true), '')::timestamptz))
    WITH CHECK (client_id = current_setting('app.oauth_client_id', true));

CREATE TABLE oauth_grants (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL REFERENCES workspaces(id),
    client_id        text NOT NULL,
    client_name      text NOT NULL,
    person_id        text NOT NULL REFERENCES people(id),
    scopes           jsonb NOT NULL,
    redirect_uri     text NOT NULL,
    resource         text,
    code_hash        text NOT NULL UNIQUE,
    code_challenge   text NOT NULL,
    code_expires_at  timestamptz NOT NULL,
    code_used_at     timestamptz,
    token_id         text REFERENCES tokens(id),
    created_at       timestamptz NOT NULL,
    revoked_at       timestamptz
);
CREATE INDEX oauth_grants_client ON oauth_grants (workspace_id, client_id, person_id, created_at);
CREATE INDEX oauth_grants_token ON oauth_grants (workspace_id, token_id);

CREATE TABLE oauth_refresh_tokens (
    token_hash    text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    grant_id      text NOT NULL REFERENCES oauth_grants(id),
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);

-- Workspace-scoped: forced row-level security, the same policy as every other table.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['oauth_grants', 'oauth_refresh_tokens']
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

-- An authorization code and a refresh token are resolved to their workspace the
-- way a bearer token is: through credential_index and fastpad_resolve_credential.
ALTER TABLE credential_index DROP CONSTRAINT credential_index_kind_check;
ALTER TABLE credential_index ADD CONSTRAINT credential_index_kind_check
    CHECK (kind IN ('token', 'session', 'oauth_code', 'oauth_refresh'));
