-- Version 20: the workspace audit log (GET /v1/audit, the app's Audit page).
--
-- One row for each act an owner or admin may have to account for: sign-ins and
-- failed sign-ins, tokens minted and revoked, accepts, auto-applied turns,
-- reverts, publishing, purges, imports, exports, placeholder reveals,
-- invitations and membership changes. A row that records a database write is
-- written in that write's transaction, so an act and its entry commit together.
-- Details hold ids and small facts, never note text.
--
-- actor_kind: person | agent (its token in token_id) | operator | system | anonymous
-- (a failed sign-in: the account it named is the target).

CREATE TABLE audit_log (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    at            TEXT NOT NULL,
    actor_kind    TEXT NOT NULL CHECK (actor_kind IN ('person', 'agent', 'operator', 'system', 'anonymous')),
    actor_id      TEXT,
    token_id      TEXT,
    action        TEXT NOT NULL CHECK (action GLOB '[a-z]*.[a-z]*'),
    note_id       TEXT,
    target        TEXT,
    details       TEXT NOT NULL DEFAULT '{}'
);
-- Newest first, per workspace; the filters narrow within it.
CREATE INDEX audit_log_recent ON audit_log (workspace_id, seq DESC);
CREATE INDEX audit_log_action ON audit_log (workspace_id, action, seq DESC);
CREATE INDEX audit_log_actor ON audit_log (workspace_id, actor_id, seq DESC);
CREATE INDEX audit_log_note ON audit_log (workspace_id, note_id, seq DESC);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
