-- Version 11: the OAuth 2.1 authorization server that interactive MCP clients
-- (Claude, Cursor, the MCP Inspector) sign in through: Dynamic Client
-- Registration (RFC 7591), the authorization code flow with PKCE, and rotating
-- refresh tokens. The access token it issues is an ordinary agent token
-- (`tokens`), so every check a token meets applies to it unchanged.
--
-- oauth_clients is written before any workspace is known: a client registers
-- itself with no credential, and names its client_id on every later request.
-- Every statement on it names the row by that id, except the sweep of clients
-- registered long ago and never approved (see fastpad/store/oauth.py).

CREATE TABLE oauth_clients (
    client_id      TEXT PRIMARY KEY,              -- fpc_ + 32 random bytes: unguessable
    client_name    TEXT NOT NULL,                 -- what the client calls itself (shown, never trusted)
    redirect_uris  TEXT NOT NULL,                 -- JSON array; an authorization request must name one exactly
    grant_types    TEXT NOT NULL,                 -- JSON array: authorization_code, and refresh_token if registered
    created_at     TEXT NOT NULL,
    approved_at    TEXT                           -- a person's first consent; until then the client may be swept
);
CREATE INDEX oauth_clients_unapproved ON oauth_clients (created_at) WHERE approved_at IS NULL;

-- One row per consent: the authorization code it issued (only its SHA-256, used
-- once, short-lived, bound to the client, redirect URI and PKCE challenge), and
-- once the code is exchanged, the agent token it became. Revoking the grant ends
-- the connection: its token is revoked and its refresh tokens stop working.
CREATE TABLE oauth_grants (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id),
    client_id        TEXT NOT NULL,
    client_name      TEXT NOT NULL,
    person_id        TEXT NOT NULL REFERENCES people(id),   -- who approved; the token's agent is theirs
    scopes           TEXT NOT NULL,                         -- JSON array: what the person granted
    redirect_uri     TEXT NOT NULL,
    resource         TEXT,                                  -- RFC 8707 resource named when authorizing
    code_hash        TEXT NOT NULL UNIQUE,
    code_challenge   TEXT NOT NULL,                         -- PKCE S256
    code_expires_at  TEXT NOT NULL,
    code_used_at     TEXT,                                  -- a second use revokes the grant
    token_id         TEXT REFERENCES tokens(id),            -- the access token; each refresh gives it a new secret
    created_at       TEXT NOT NULL,
    revoked_at       TEXT
);
CREATE INDEX oauth_grants_client ON oauth_grants (workspace_id, client_id, person_id, created_at);
CREATE INDEX oauth_grants_token ON oauth_grants (workspace_id, token_id);

-- Refresh tokens, only as SHA-256. Each is used once: its use hands out the next
-- one, and presenting a used one again revokes the whole grant (OAuth 2.1 §4.3.1).
CREATE TABLE oauth_refresh_tokens (
    token_hash    TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    grant_id      TEXT NOT NULL REFERENCES oauth_grants(id),
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    used_at       TEXT
);

-- An authorization code and a refresh token arrive before their workspace is
-- known, like a bearer token: the credential index learns two more kinds. SQLite
-- cannot alter a CHECK constraint, so the table is rebuilt with the same rows.
CREATE TABLE credential_index_v11 (
    hash          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('token', 'session', 'oauth_code', 'oauth_refresh')),
    workspace_id  TEXT NOT NULL,
    subject_id    TEXT NOT NULL
);
INSERT INTO credential_index_v11 (hash, kind, workspace_id, subject_id)
    SELECT hash, kind, workspace_id, subject_id FROM credential_index;
DROP TABLE credential_index;
ALTER TABLE credential_index_v11 RENAME TO credential_index;
