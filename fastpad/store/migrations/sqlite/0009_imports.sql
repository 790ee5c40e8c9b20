-- Version 9: imports (Obsidian vaults, Notion Markdown & CSV exports, Markdown
-- folders), their ledgers, the ids they minted, and the attachments they stored.
--
-- An import is one attempt at one archive. Its ledger has a row for every item
-- the archive contained, whatever happened to it (`reason` says why a skip was a
-- skip), plus the capped rows about links. `import_items` remembers the ids an
-- import minted for each archive item (path + content digest -> note id and block
-- ids) for as long as the workspace exists, so a retried or repeated import reuses
-- them: a link the first attempt wrote is never orphaned, and nothing is created
-- twice. Ids are minted once and remembered, never derived from content.

CREATE TABLE imports (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id),
    status            TEXT NOT NULL CHECK (status IN ('uploading', 'queued', 'running', 'completed', 'cancelled',
                                                      'failed')),
    source            TEXT,                       -- obsidian | notion | markdown (NULL until detected)
    label             TEXT NOT NULL DEFAULT '',   -- the archive's or folder's name
    archive_bytes     INTEGER,                    -- an upload's declared size
    received_bytes    INTEGER NOT NULL DEFAULT 0,
    cancel_requested  INTEGER NOT NULL DEFAULT 0,
    progress          TEXT NOT NULL DEFAULT '{}', -- JSON counters, refreshed per batch
    summary           TEXT,                       -- JSON, once finished
    problem           TEXT,                       -- JSON problem document of a refusal or failure
    created_by_kind   TEXT NOT NULL,
    created_by_id     TEXT NOT NULL,
    token_id          TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,              -- the runner's heartbeat while it runs
    started_at        TEXT,
    finished_at       TEXT
);
CREATE INDEX imports_workspace ON imports (workspace_id, id);

CREATE TABLE import_ledger (
    workspace_id  TEXT NOT NULL,
    import_id     TEXT NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    item          TEXT NOT NULL,      -- the path in the archive (a link row: the note's path)
    kind          TEXT NOT NULL,      -- note, canvas, database, database_row, attachment, file, link, …
    status        TEXT NOT NULL,      -- imported, unchanged, stored, skipped, cancelled, failed
    reason        TEXT,               -- a skip's reason (encrypted_note, unsupported_attachment, …)
    detail        TEXT NOT NULL DEFAULT '',
    note_id       TEXT,
    target        TEXT,               -- a link row's target, as written
    count         INTEGER,            -- "N more" rows and the final left-out row
    PRIMARY KEY (import_id, seq)
);

CREATE TABLE import_items (
    workspace_id  TEXT NOT NULL,
    item_path     TEXT NOT NULL,
    digest        TEXT NOT NULL,      -- SHA-256 of the item's bytes
    note_id       TEXT NOT NULL,
    block_ids     TEXT NOT NULL DEFAULT '[]',
    import_id     TEXT NOT NULL,      -- the attempt that minted them
    created_at    TEXT NOT NULL,
    PRIMARY KEY (workspace_id, item_path, digest)
);

-- Images and PDFs an import stored, once per workspace per content (SHA-256).
CREATE TABLE attachments (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    sha256        TEXT NOT NULL,
    media_type    TEXT NOT NULL,
    name          TEXT NOT NULL,
    size          INTEGER NOT NULL,
    content       BLOB NOT NULL,
    import_id     TEXT,
    created_at    TEXT NOT NULL,
    UNIQUE (workspace_id, sha256)
);
