-- Version 15: a turn may propose a note that does not exist yet.
--
-- An agent's new note is a proposal like any other edit: the turn holds the
-- note's id (minted when it is proposed), its title, types and properties
-- (`proposed_note`, JSON; NULL for a turn on an existing note) and its blocks
-- as insertions. Accepting it creates the note under that id and lands the
-- accepted blocks; rejecting it leaves no note behind. So `note_id` can no
-- longer reference notes(id): until the accept there is no row to reference.
-- Purging a note deletes its turns explicitly (TrashPurge), as the cascade did.
--
-- SQLite cannot drop a foreign key in place: the table is rebuilt (the
-- migration runs with foreign keys off and checks them before it commits).

CREATE TABLE turns_v15 (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id),
    note_id           TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'partially_accepted', 'rejected',
                                                      'abandoned', 'reverted')),
    author_kind       TEXT NOT NULL CHECK (author_kind IN ('agent', 'person')),
    author_id         TEXT NOT NULL,
    author_key        TEXT NOT NULL,
    token_id          TEXT,
    session_id        TEXT NOT NULL,
    origin            TEXT NOT NULL,
    idempotency_key   TEXT NOT NULL,
    request_hash      TEXT NOT NULL,
    base_frontier     TEXT NOT NULL,
    proposal_update   BLOB NOT NULL,
    ops               TEXT NOT NULL,
    source_block_ids  TEXT NOT NULL DEFAULT '[]',
    diffs             TEXT NOT NULL,
    pending_blocks    TEXT NOT NULL DEFAULT '[]',
    pending_ops       TEXT NOT NULL DEFAULT '[]',
    landed_blocks     TEXT NOT NULL DEFAULT '[]',
    accepted_ops      TEXT NOT NULL DEFAULT '[]',
    authority         TEXT CHECK (authority IN ('grant', 'auto_apply')),
    reviewed_at       TEXT,
    reviewed_by       TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    proposed_note     TEXT,
    UNIQUE (workspace_id, author_key, idempotency_key)
);

INSERT INTO turns_v15 (id, workspace_id, note_id, status, author_kind, author_id, author_key, token_id, session_id,
                       origin, idempotency_key, request_hash, base_frontier, proposal_update, ops, source_block_ids,
                       diffs, pending_blocks, pending_ops, landed_blocks, accepted_ops, authority, reviewed_at,
                       reviewed_by, created_at, updated_at)
SELECT id, workspace_id, note_id, status, author_kind, author_id, author_key, token_id, session_id, origin,
       idempotency_key, request_hash, base_frontier, proposal_update, ops, source_block_ids, diffs, pending_blocks,
       pending_ops, landed_blocks, accepted_ops, authority, reviewed_at, reviewed_by, created_at, updated_at
FROM turns;

DROP TABLE turns;
ALTER TABLE turns_v15 RENAME TO turns;
CREATE INDEX turns_workspace ON turns (workspace_id, id);
CREATE INDEX turns_note ON turns (workspace_id, note_id);
CREATE INDEX turns_activity ON turns (workspace_id, authority, reviewed_at);
