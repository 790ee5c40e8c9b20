-- Version 5: the change feed says what changed and who changed it; blocks
-- remember who last wrote them; memory topics; an index for the trash purge.

-- change_feed: a row may concern no note (a type definition), and every row
-- names its actor and the blocks it touched. SQLite cannot relax NOT NULL in
-- place, so the table is rebuilt; rows written before this version keep their
-- seq and get NULL actor and block columns ("not recorded").
CREATE TABLE change_feed_v5 (
    workspace_id    TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    note_id         TEXT,              -- NULL for a change to no particular note
    subject_id      TEXT,              -- what else it concerns (a type name, an edge or proposal id)
    kind            TEXT NOT NULL,
    actor_kind      TEXT,              -- person | agent | system
    actor_id        TEXT,
    token_id        TEXT,
    block_ids       TEXT,              -- JSON array: blocks inserted, changed or deleted (the first 100)
    blocks_touched  INTEGER,           -- how many blocks in all
    at              TEXT NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);
INSERT INTO change_feed_v5 (workspace_id, seq, note_id, kind, at)
    SELECT workspace_id, seq, note_id, kind, at FROM change_feed;
DROP TABLE change_feed;
ALTER TABLE change_feed_v5 RENAME TO change_feed;
-- A token limited to a set of notes reads the feed through this index.
CREATE INDEX change_feed_note ON change_feed (workspace_id, note_id, seq);

-- Who last wrote each block's content (a review-state change alone leaves it),
-- and when. NULL author = last written before this version.
ALTER TABLE blocks ADD COLUMN author_kind TEXT;
ALTER TABLE blocks ADD COLUMN author_id TEXT;
ALTER TABLE blocks ADD COLUMN author_token_id TEXT;
ALTER TABLE blocks ADD COLUMN written_at TEXT;
UPDATE blocks SET written_at = updated_at;

-- Notes designated as memory topics: what agents read as an index, or one at a time.
CREATE TABLE memory_topics (
    workspace_id        TEXT NOT NULL,
    note_id             TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    name                TEXT NOT NULL,
    name_key            TEXT NOT NULL,   -- the name case-folded: unique per workspace
    designated_by_kind  TEXT NOT NULL,
    designated_by_id    TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    PRIMARY KEY (workspace_id, note_id),
    UNIQUE (workspace_id, name_key)
);

-- The purge looks for trashed notes past the retention window.
CREATE INDEX notes_trashed ON notes (workspace_id, trashed_at) WHERE trashed_at IS NOT NULL;
