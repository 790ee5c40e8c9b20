-- Version 7: proposals (turns), their declared sources, the append-only audit log,
-- and what agent sessions read (for the cross-note copy guard).
--
-- A turn is one proposal against one note. Its ops, per-block diff and the proposed
-- Loro update are kept as proposed; `pending_blocks`/`pending_ops` say what still
-- waits for a decision and `landed_blocks` what reached the note. `authority` is set
-- when any part landed on an agent's authority (`grant`: accepted under turns:accept;
-- `auto_apply`), which puts the turn on the Agent activity page until a person marks
-- it reviewed (`reviewed_at`) or reverts it.

CREATE TABLE turns (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id),
    note_id           TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    status            TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'partially_accepted', 'rejected',
                                                      'abandoned', 'reverted')),
    author_kind       TEXT NOT NULL CHECK (author_kind IN ('agent', 'person')),
    author_id         TEXT NOT NULL,
    author_key        TEXT NOT NULL,             -- the credential: 'token:<id>' or 'person:<id>'
    token_id          TEXT,
    session_id        TEXT NOT NULL,
    origin            TEXT NOT NULL,             -- what the proposed text is, once it lands
    idempotency_key   TEXT NOT NULL,
    request_hash      TEXT NOT NULL,
    base_frontier     TEXT NOT NULL,             -- expected_frontier: the version the agent read
    proposal_update   BLOB NOT NULL,             -- the proposal as a Loro update on top of base_frontier
    ops               TEXT NOT NULL,             -- JSON: the validated ops, handles resolved to block ids
    source_block_ids  TEXT NOT NULL DEFAULT '[]',
    diffs             TEXT NOT NULL,             -- JSON: the per-block diff (before/after/anchor/sources)
    pending_blocks    TEXT NOT NULL DEFAULT '[]',
    pending_ops       TEXT NOT NULL DEFAULT '[]', -- indexes of edge/calendar ops still waiting for a person
    landed_blocks     TEXT NOT NULL DEFAULT '[]',
    accepted_ops      TEXT NOT NULL DEFAULT '[]', -- edge/calendar ops a person accepted
    authority         TEXT CHECK (authority IN ('grant', 'auto_apply')),
    reviewed_at       TEXT,
    reviewed_by       TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    UNIQUE (workspace_id, author_key, idempotency_key)
);
CREATE INDEX turns_workspace ON turns (workspace_id, id);
CREATE INDEX turns_note ON turns (workspace_id, note_id);
CREATE INDEX turns_activity ON turns (workspace_id, authority, reviewed_at);

-- The sources a turn declares for each block it proposes; `landed_at` is set when that
-- block reaches the note, so a retracted source finds every block accepted from it.
CREATE TABLE turn_sources (
    workspace_id     TEXT NOT NULL,
    turn_id          TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    block_id         TEXT NOT NULL,
    source_note_id   TEXT NOT NULL,
    source_block_id  TEXT NOT NULL,
    landed_at        TEXT,
    PRIMARY KEY (turn_id, block_id, source_block_id)
);
CREATE INDEX turn_sources_source ON turn_sources (workspace_id, source_block_id);

-- Source blocks a person marked retracted (found to be wrong). Retracting one lists every
-- block accepted from it (turn_sources); the row is what the review page warns with.
CREATE TABLE source_retractions (
    workspace_id  TEXT NOT NULL,
    block_id      TEXT NOT NULL,
    note_id       TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    retracted_by  TEXT NOT NULL,
    retracted_at  TEXT NOT NULL,
    PRIMARY KEY (workspace_id, block_id)
);

-- The audit log: one row per thing that happened to a turn (every accept, under the
-- agent and token that made it). Append-only: the triggers refuse UPDATE and DELETE.
-- It holds ids, frontiers and review states, never note text.
CREATE TABLE turn_events (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id       TEXT NOT NULL,
    turn_id            TEXT NOT NULL,
    note_id            TEXT NOT NULL,
    action             TEXT NOT NULL CHECK (action IN ('propose', 'accept', 'auto_apply', 'reject', 'abandon',
                                                       'revert', 'mark_reviewed')),
    actor_kind         TEXT NOT NULL,
    actor_id           TEXT NOT NULL,
    token_id           TEXT,
    review_state       TEXT,                      -- what the landed blocks became
    block_ids          TEXT NOT NULL DEFAULT '[]',
    op_indexes         TEXT NOT NULL DEFAULT '[]',
    frontier_before    TEXT,                      -- the note around a landing or a revert
    frontier_after     TEXT,
    provenance_before  TEXT NOT NULL DEFAULT '{}', -- block id -> [origin, review_state] before a landing
    at                 TEXT NOT NULL
);
CREATE INDEX turn_events_turn ON turn_events (workspace_id, turn_id, seq);

CREATE TRIGGER turn_events_no_update BEFORE UPDATE ON turn_events BEGIN
    SELECT RAISE(ABORT, 'turn_events is append-only');
END;

CREATE TRIGGER turn_events_no_delete BEFORE DELETE ON turn_events BEGIN
    SELECT RAISE(ABORT, 'turn_events is append-only');
END;

-- What a credential's agent sessions read, block by block, for the cross-note copy
-- guard. Bounded: rows older than the session lifetime and all but the newest reads
-- per credential are pruned whenever a read is recorded.
CREATE TABLE session_reads (
    workspace_id  TEXT NOT NULL,
    credential    TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    note_id       TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    frontier      TEXT NOT NULL,
    blocks        TEXT NOT NULL,                  -- JSON [[block_id, text], ...] as read
    read_at       TEXT NOT NULL,
    PRIMARY KEY (workspace_id, credential, note_id, frontier)
);
CREATE INDEX session_reads_recent ON session_reads (workspace_id, credential, read_at);
