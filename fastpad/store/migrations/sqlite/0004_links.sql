-- Version 4: links as typed edges with evidence, title history (aliases) and supersession.
--
-- `links` from version 1 was never written to; it is replaced by the edge table.
-- A link points at a note id once resolved; until then (a forward link to a
-- title no note has yet) `target_note_id` is NULL and `target_key`, the
-- normalised title, is how the write path finds it when that note appears.

DROP TABLE links;

CREATE TABLE links (
    id                     TEXT PRIMARY KEY,
    workspace_id           TEXT NOT NULL,
    source_note_id         TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    source_block_id        TEXT,                  -- the evidence block, if any
    target_note_id         TEXT REFERENCES notes(id) ON DELETE SET NULL,  -- NULL = unresolved
    target_title           TEXT NOT NULL,         -- the title as written (or the target's, for an id link)
    target_key             TEXT NOT NULL,         -- normalised title (wikilinks.title_key); '' = made by note id
    type                   TEXT NOT NULL,         -- mentions, cites, related, supersedes, …
    derivation             TEXT NOT NULL CHECK (derivation IN ('text', 'api')),
    status                 TEXT NOT NULL CHECK (status IN ('asserted', 'inferred')),
    confidence             REAL,                  -- inferred only: the value at created_at (decays on read)
    evidence_text          TEXT NOT NULL DEFAULT '',
    evidence_origin        TEXT,                  -- provenance of the evidence block when it was read
    evidence_review_state  TEXT,
    created_by_kind        TEXT NOT NULL,
    created_by_id          TEXT NOT NULL,
    token_id               TEXT,
    confirmed_by           TEXT,                  -- the person who promoted an inferred edge
    confirmed_at           TEXT,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
);
CREATE INDEX links_source ON links (workspace_id, source_note_id, id);
CREATE INDEX links_target ON links (workspace_id, target_note_id, id);
CREATE INDEX links_unresolved ON links (workspace_id, target_key) WHERE target_note_id IS NULL;

-- Every title a note has had. The current one has retired_at NULL; the others
-- are aliases, so `[[Old title]]` keeps resolving after a rename.
CREATE TABLE note_titles (
    workspace_id  TEXT NOT NULL,
    note_id       TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    title         TEXT NOT NULL,
    since         TEXT NOT NULL,
    retired_at    TEXT,
    PRIMARY KEY (note_id, key)
);
CREATE INDEX note_titles_key ON note_titles (workspace_id, key);

-- The fast lookup beside each `supersedes` edge: which note replaced this one.
-- Removing the edge removes the row.
CREATE TABLE supersessions (
    workspace_id  TEXT NOT NULL,
    note_id       TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    successor_id  TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    link_id       TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    created_at    TEXT NOT NULL
);
CREATE INDEX supersessions_successor ON supersessions (workspace_id, successor_id);

-- Titles of notes written before this version. lower() here is ASCII-only; the
-- write path recomputes the key of a note's current title on its next write.
INSERT INTO note_titles (workspace_id, note_id, key, title, since, retired_at)
    SELECT workspace_id, id, lower(trim(title)), title, updated_at, NULL FROM notes WHERE trim(title) <> '';
