-- Version 20: a team in one workspace — invitations, the viewer role, and where a session signed in from.
--
-- An invitation is a single-use link: only the SHA-256 of its secret is kept, and the
-- credential index learns a third pre-workspace kind, since the invitee opens the link
-- before any workspace is known (resolved through fastpad_resolve_credential, like a token).

CREATE TABLE invitations (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    email         text NOT NULL,
    role          text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    token_hash    text NOT NULL UNIQUE,
    invited_by    text NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    accepted_at   timestamptz,
    accepted_by   text,
    revoked_at    timestamptz
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);

ALTER TABLE invitations ENABLE ROW LEVEL SECURITY;
ALTER TABLE invitations FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON invitations
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

ALTER TABLE credential_index DROP CONSTRAINT credential_index_kind_check;
ALTER TABLE credential_index ADD CONSTRAINT credential_index_kind_check
    CHECK (kind IN ('token', 'session', 'oauth_code', 'oauth_refresh', 'invitation'));

-- A viewer reads (and comments) and never writes.
ALTER TABLE workspace_members DROP CONSTRAINT workspace_members_role_check;
ALTER TABLE workspace_members ADD CONSTRAINT workspace_members_role_check
    CHECK (role IN ('owner', 'admin', 'member', 'viewer'));

-- Settings → Sessions names where each session signed in from (its browser's User-Agent, capped).
ALTER TABLE web_sessions ADD COLUMN user_agent text NOT NULL DEFAULT '';
