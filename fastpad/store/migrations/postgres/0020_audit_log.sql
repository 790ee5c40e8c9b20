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
    seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    at            timestamptz NOT NULL,
    actor_kind    text NOT NULL CHECK (actor_kind IN ('person', 'agent', 'operator', 'system', 'anonymous')),
    actor_id      text,
    token_id      text,
    action        text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
    note_id       text,
    target        text,
    details       jsonb NOT NULL DEFAULT '{}'
);
-- Newest first, per workspace; the filters narrow within it.
CREATE INDEX audit_log_recent ON audit_log (workspace_id, seq DESC);
CREATE INDEX audit_log_action ON audit_log (workspace_id, action, seq DESC);
CREATE INDEX audit_log_actor ON audit_log (workspace_id, actor_id, seq DESC);
CREATE INDEX audit_log_note ON audit_log (workspace_id, note_id, seq DESC);

-- Append-only, for the application role and the owner alike.
CREATE FUNCTION fastpad_audit_log_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION fastpad_audit_log_append_only();

ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_log FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON audit_log
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));
