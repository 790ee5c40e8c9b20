-- Version 20: a team in one workspace — invitations, the viewer role, and where a session signed in from.
--
-- An invitation is a single-use link: only the SHA-256 of its secret is kept, and the
-- credential index learns a third pre-workspace kind, since the invitee opens the link
-- before any workspace is known. SQLite cannot alter a CHECK constraint, so the two
-- tables whose CHECK grows are rebuilt with the same rows.

CREATE TABLE invitations (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    email         TEXT NOT NULL,                 -- stored lower-cased
    role          TEXT NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    token_hash    TEXT NOT NULL UNIQUE,          -- SHA-256 of the link's secret
    invited_by    TEXT NOT NULL,                 -- a person id
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    accepted_at   TEXT,
    accepted_by   TEXT,                          -- the person the link made a member
    revoked_at    TEXT
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);

CREATE TABLE credential_index_v20 (
    hash          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('token', 'session', 'oauth_code', 'oauth_refresh', 'invitation')),
    workspace_id  TEXT NOT NULL,
    subject_id    TEXT NOT NULL
);
INSERT INTO credential_index_v20 (hash, kind, workspace_id, subject_id)
    SELECT hash, kind, workspace_id, subject_id FROM credential_index;
DROP TABLE credential_index;
ALTER TABLE credential_index_v20 RENAME TO credential_index;

-- A viewer reads (and comments) and never writes.
CREATE TABLE workspace_members_v20 (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    person_id     TEXT NOT NULL REFERENCES people(id),
    role          TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at    TEXT NOT NULL,
    PRIMARY KEY (workspace_id, person_id)
);
INSERT INTO workspace_members_v20 (workspace_id, person_id, role, created_at)
    SELECT workspace_id, person_id, role, created_at FROM workspace_members;
DROP TABLE workspace_members;
ALTER TABLE workspace_members_v20 RENAME TO workspace_members;
CREATE INDEX workspace_members_person ON workspace_members (person_id);

-- Settings → Sessions names where each session signed in from (its browser's User-Agent, capped).
ALTER TABLE web_sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
