-- Version 8: `fp login` (the OAuth device authorization flow, RFC 8628) and the
-- receipts that keep `POST /v1/capture` idempotent for good.
-- See sqlite/0008_device.sql for what each column means.

CREATE TABLE device_authorizations (
    device_code_hash  text PRIMARY KEY,
    user_code         text NOT NULL UNIQUE,
    client_name       text NOT NULL DEFAULT '',
    scopes            jsonb NOT NULL,
    interval_s        integer NOT NULL,
    created_at        timestamptz NOT NULL,
    expires_at        timestamptz NOT NULL,
    last_polled_at    timestamptz,
    approver_workspace_id  text REFERENCES workspaces(id),
    approver_id       text REFERENCES people(id),
    approved          boolean,
    decided_at        timestamptz,
    consumed_at       timestamptz,
    token_id          text
);
CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);

-- Not workspace-scoped: a login starts before any workspace is known. Forced
-- row-level security still fails closed, keyed on the secret the caller holds
-- rather than on a workspace: a transaction sees exactly the row whose device
-- code hash (`app.device_code_hash`, the terminal polling) or user code
-- (`app.user_code`, the person approving) it names, plus — only when it sets
-- `app.device_expired_before` — the rows that expired before then, to sweep them.
ALTER TABLE device_authorizations ENABLE ROW LEVEL SECURITY;
ALTER TABLE device_authorizations FORCE ROW LEVEL SECURITY;
CREATE POLICY device_by_secret ON device_authorizations
    USING (device_code_hash = current_setting('app.device_code_hash', true)
           OR user_code = current_setting('app.user_code', true)
           OR expires_at < NULLIF(current_setting('app.device_expired_before', true), '')::timestamptz)
    WITH CHECK (device_code_hash = current_setting('app.device_code_hash', true)
                OR user_code = current_setting('app.user_code', true));

CREATE TABLE capture_receipts (
    workspace_id   text NOT NULL REFERENCES workspaces(id),
    principal_key  text NOT NULL,
    key            text NOT NULL,
    request_hash   text NOT NULL,
    note_id        text NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, principal_key, key)
);

ALTER TABLE capture_receipts ENABLE ROW LEVEL SECURITY;
ALTER TABLE capture_receipts FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON capture_receipts
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));
