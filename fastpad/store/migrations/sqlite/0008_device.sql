-- Version 8: `fp login` (the OAuth device authorization flow, RFC 8628) and the
-- receipts that keep `POST /v1/capture` idempotent for good.
--
-- device_authorizations is written before any workspace is known: the terminal
-- that starts a login has no credential. Every statement on it names the row
-- by an exact secret — the SHA-256 of the device code the terminal holds, or the
-- user code a signed-in person typed — except the sweep of rows long expired
-- (see fastpad/store/device.py). The approver's workspace and id are filled in by the
-- approving web session; the credential itself is minted when the terminal
-- next polls, and only its id is kept here.

CREATE TABLE device_authorizations (
    device_code_hash  TEXT PRIMARY KEY,           -- SHA-256 hex of the device code
    user_code         TEXT NOT NULL UNIQUE,       -- 8 letters, stored without the dash
    client_name       TEXT NOT NULL DEFAULT '',   -- what the terminal calls itself (shown, never trusted)
    scopes            TEXT NOT NULL,              -- JSON array of the scopes asked for
    interval_s        INTEGER NOT NULL,           -- minimum seconds between polls (grows on slow_down)
    created_at        TEXT NOT NULL,
    expires_at        TEXT NOT NULL,
    last_polled_at    TEXT,
    approver_workspace_id  TEXT REFERENCES workspaces(id),  -- the approving session's workspace
    approver_id       TEXT REFERENCES people(id),      -- who approved or denied
    approved          INTEGER,                         -- NULL: undecided; 1 approved; 0 denied
    decided_at        TEXT,
    consumed_at       TEXT,                            -- the poll that received the credential
    token_id          TEXT                             -- the credential minted then
);
CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);

-- A capture's idempotency key -> the note it created, kept as long as the
-- workspace: a capture spooled on a laptop and replayed days later still
-- acknowledges instead of creating a second note (the generic idempotency
-- records last 24 hours).
CREATE TABLE capture_receipts (
    workspace_id   TEXT NOT NULL REFERENCES workspaces(id),
    principal_key  TEXT NOT NULL,                 -- person:<id> or agent:<id>, as idempotency_keys
    key            TEXT NOT NULL,
    request_hash   TEXT NOT NULL,                 -- a different capture under the same key is a conflict
    note_id        TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (workspace_id, principal_key, key)
);
