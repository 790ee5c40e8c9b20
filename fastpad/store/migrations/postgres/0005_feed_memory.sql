-- Version 5: the change feed says what changed and who changed it; blocks
-- remember who last wrote them; memory topics; an index for the trash purge.

-- change_feed: a row may concern no note (a type definition), and every row
-- names its actor and the blocks it touched. Rows written before this version
-- keep their seq and get NULL actor and block columns ("not recorded").
ALTER TABLE change_feed ALTER COLUMN note_id DROP NOT NULL;
ALTER TABLE change_feed
    ADD COLUMN subject_id      text,      -- what else it concerns (a type name, an edge or proposal id)
    ADD COLUMN actor_kind      text,      -- person | agent | system
    ADD COLUMN actor_id        text,
    ADD COLUMN token_id        text,
    ADD COLUMN block_ids       jsonb,     -- blocks inserted, changed or deleted (the first 100)
    ADD COLUMN blocks_touched  integer;   -- how many blocks in all
-- A token limited to a set of notes reads the feed through this index.
CREATE INDEX change_feed_note ON change_feed (workspace_id, note_id, seq);

-- Who last wrote each block's content (a review-state change alone leaves it),
-- and when. NULL author = last written before this version.
ALTER TABLE blocks
    ADD COLUMN author_kind      text,
    ADD COLUMN author_id        text,
    ADD COLUMN author_token_id  text,
    ADD COLUMN written_at       timestamptz;
UPDATE blocks SET written_at = updated_at;

-- Notes designated as memory topics: what agents read as an index, or one at a time.
CREATE TABLE memory_topics (
    workspace_id        text NOT NULL,
    note_id             text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    name                text NOT NULL,
    name_key            text NOT NULL,   -- the name case-folded: unique per workspace
    designated_by_kind  text NOT NULL,
    designated_by_id    text NOT NULL,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, note_id),
    UNIQUE (workspace_id, name_key)
);
ALTER TABLE memory_topics ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_topics FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON memory_topics
    USING (workspace_id = current_setting('app.workspace_id', true))
    WITH CHECK (workspace_id = current_setting('app.workspace_id', true));

-- The purge looks for trashed notes past the retention window.
CREATE INDEX notes_trashed ON notes (workspace_id, trashed_at) WHERE trashed_at IS NOT NULL;
