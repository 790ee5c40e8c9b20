-- Fastpad schema, SQLite backend, version 1.
--
-- SQLite has no row-level security: the workspace rule is enforced by the one
-- data-access layer (fastpad/store/base.py), which adds `workspace_id = ?` to
-- every workspace-scoped statement itself. Timestamps are UTC ISO 8601 text
-- of fixed width (so text order is time order); JSON columns are text.

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    feed_seq    INTEGER NOT NULL DEFAULT 0,   -- last change_feed.seq handed out
    created_at  TEXT NOT NULL
);

-- A person is global (one email, one password) and joins workspaces as a member.
CREATE TABLE people (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE,      -- stored lower-cased
    display_name   TEXT NOT NULL DEFAULT '',
    password_hash  TEXT,                      -- argon2id; NULL = cannot sign in with a password
    created_at     TEXT NOT NULL
);

CREATE TABLE workspace_members (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    person_id     TEXT NOT NULL REFERENCES people(id),
    role          TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at    TEXT NOT NULL,
    PRIMARY KEY (workspace_id, person_id)
);
CREATE INDEX workspace_members_person ON workspace_members (person_id);

CREATE TABLE agents (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    name          TEXT NOT NULL,
    created_by    TEXT,
    created_at    TEXT NOT NULL
);
CREATE INDEX agents_workspace ON agents (workspace_id, id);

-- Only the SHA-256 of a token is stored; `prefix` is the greppable start shown in lists.
CREATE TABLE tokens (
    id                     TEXT PRIMARY KEY,
    workspace_id           TEXT NOT NULL REFERENCES workspaces(id),
    token_hash             TEXT NOT NULL UNIQUE,
    prefix                 TEXT NOT NULL,
    label                  TEXT NOT NULL DEFAULT '',
    kind                   TEXT NOT NULL CHECK (kind IN ('agent', 'person')),
    agent_id               TEXT REFERENCES agents(id),
    person_id              TEXT REFERENCES people(id),
    scopes                 TEXT NOT NULL,     -- JSON array of scope names
    note_ids               TEXT,              -- JSON array of note ids; NULL = the whole workspace
    auto_apply             INTEGER NOT NULL DEFAULT 0,
    rate_limit_per_minute  INTEGER NOT NULL,
    parent_id              TEXT REFERENCES tokens(id),
    root_id                TEXT NOT NULL,     -- the delegation chain's first token (shares its rate bucket)
    created_by_kind        TEXT NOT NULL,
    created_by_id          TEXT,
    expires_at             TEXT NOT NULL,
    revoked_at             TEXT,
    last_used_at           TEXT,
    created_at             TEXT NOT NULL,
    CHECK ((kind = 'agent' AND agent_id IS NOT NULL) OR (kind = 'person' AND person_id IS NOT NULL))
);
CREATE INDEX tokens_workspace ON tokens (workspace_id, id);
CREATE INDEX tokens_parent ON tokens (parent_id);

CREATE TABLE web_sessions (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces(id),
    person_id      TEXT NOT NULL REFERENCES people(id),
    session_hash   TEXT NOT NULL UNIQUE,       -- SHA-256 of the cookie value
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    last_seen_at   TEXT NOT NULL,
    ended_at       TEXT
);
CREATE INDEX web_sessions_workspace ON web_sessions (workspace_id, id);

-- The one lookup that happens before the workspace is known: credential hash ->
-- workspace. Holds no secret and no content. (On PostgreSQL it is readable
-- only through a SECURITY DEFINER function; see postgres/0001_init.sql.)
CREATE TABLE credential_index (
    hash          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('token', 'session')),
    workspace_id  TEXT NOT NULL,
    subject_id    TEXT NOT NULL
);

CREATE TABLE notes (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id),
    title            TEXT NOT NULL DEFAULT '',
    types            TEXT NOT NULL DEFAULT '[]',   -- JSON array
    properties       TEXT NOT NULL DEFAULT '{}',   -- JSON object
    snapshot         BLOB NOT NULL,                -- Loro snapshot after the last write
    frontier         TEXT NOT NULL,                -- "fp1:…" of that snapshot
    op_seq           INTEGER NOT NULL DEFAULT 0,   -- last note_updates.seq
    created_by_kind  TEXT,
    created_by_id    TEXT,
    archived_at      TEXT,
    trashed_at       TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX notes_workspace ON notes (workspace_id, id);

-- The per-note op log: every Loro update a write imported, in order.
CREATE TABLE note_updates (
    workspace_id    TEXT NOT NULL,
    note_id         TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    payload         BLOB NOT NULL,
    peer_id         TEXT,
    frontier        TEXT NOT NULL,              -- the note's frontier after this update
    principal_kind  TEXT NOT NULL,
    principal_id    TEXT NOT NULL,
    token_id        TEXT,
    origin          TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (note_id, seq)
);

-- The queryable projection of a note's blocks, with provenance beside the CRDT.
-- `rid` is an explicit rowid alias so the FTS5 external-content index (migration 2)
-- can point at rows stably.
CREATE TABLE blocks (
    rid           INTEGER PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    note_id       TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    block_id      TEXT NOT NULL,
    position      INTEGER NOT NULL,
    type          TEXT NOT NULL,
    text          TEXT NOT NULL,
    attrs         TEXT NOT NULL DEFAULT '{}',
    origin        TEXT NOT NULL,
    review_state  TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (note_id, block_id)
);
CREATE INDEX blocks_note_position ON blocks (note_id, position);

CREATE TABLE links (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL,
    source_note_id   TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    source_block_id  TEXT,
    target_note_id   TEXT NOT NULL,
    target_block_id  TEXT,
    kind             TEXT NOT NULL DEFAULT 'link',
    asserted         INTEGER NOT NULL DEFAULT 1,
    evidence         TEXT NOT NULL DEFAULT '{}',
    created_at       TEXT NOT NULL
);
CREATE INDEX links_source ON links (workspace_id, source_note_id);
CREATE INDEX links_target ON links (workspace_id, target_note_id);

CREATE TABLE idempotency_keys (
    workspace_id   TEXT NOT NULL,
    principal_key  TEXT NOT NULL,
    key            TEXT NOT NULL,
    request_hash   TEXT NOT NULL,
    status         INTEGER NOT NULL,
    headers        TEXT NOT NULL DEFAULT '{}',
    body           BLOB NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (workspace_id, principal_key, key)
);

-- One row per committed write. `seq` is per workspace, handed out from
-- workspaces.feed_seq inside the write's transaction, so within a workspace
-- seq order is commit order and a reader never sees a gap fill in later.
CREATE TABLE change_feed (
    workspace_id  TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    note_id       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    at            TEXT NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);
