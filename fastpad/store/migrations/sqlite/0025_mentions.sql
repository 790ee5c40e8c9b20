-- Version 25: a person's Inbox of mentions.
--
-- One row per (person, block) that mentions them: written by the write path's mention
-- step (fastpad/knowledge/mentions.py) when a committed write first puts
-- `[@Name](/people/{id})` into the block, so editing the block again, or removing the
-- mention and writing it back, never makes a second row. `mentioned_by_*` is the writer
-- (a person, or the agent whose write landed), `origin` the block's at that moment.
-- Purging the note removes its rows.

CREATE TABLE mentions (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
    person_id           TEXT NOT NULL REFERENCES people(id),
    note_id             TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    block_id            TEXT NOT NULL,
    mentioned_by_kind   TEXT NOT NULL CHECK (mentioned_by_kind IN ('person', 'agent')),
    mentioned_by_id     TEXT NOT NULL,
    token_id            TEXT,
    origin              TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    read_at             TEXT,
    UNIQUE (workspace_id, person_id, block_id)
);
-- A person's Inbox, newest first (ids are ULIDs, so id order is creation order).
CREATE INDEX mentions_inbox ON mentions (workspace_id, person_id, id);
CREATE INDEX mentions_note ON mentions (note_id);
