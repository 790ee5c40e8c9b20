-- Version 27: comments on notes, and Inbox entries that point at a comment.
--
-- A comment is not note content: it lives beside the note, never in its Loro document or op log,
-- so the canonical Markdown is unchanged by it. One row per comment; a thread is its first
-- comment (thread_id = id) and the replies naming it. The anchor is a block id (stable through
-- split — the first half keeps it —, join, move and `fp push`) and, for a comment on a text range,
-- two encoded Loro cursors (the range's first character's left edge, its last's right edge) that
-- follow the text through every edit; `quote` is the text as it read when the comment was made.
-- A comment deleted while its thread has replies stays as a tombstone (deleted_at, body emptied).
-- Resolution is the thread's: it is kept on the first comment.

CREATE TABLE comments (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id),
    note_id           TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    thread_id         TEXT NOT NULL,
    block_id          TEXT NOT NULL,
    range_start       BLOB,
    range_end         BLOB,
    quote             TEXT,
    body              TEXT NOT NULL,
    author_kind       TEXT NOT NULL CHECK (author_kind IN ('person', 'agent')),
    author_id         TEXT NOT NULL,
    token_id          TEXT,
    created_at        TEXT NOT NULL,
    edited_at         TEXT,
    deleted_at        TEXT,
    resolved_at       TEXT,
    resolved_by_id    TEXT
);
CREATE INDEX comments_note ON comments (workspace_id, note_id, thread_id, id);

-- A mention in a comment is an Inbox entry too: comment_id names it (NULL: a mention in a block).
-- The one-entry-per-(person, block) rule stays for blocks; a comment gets one per (person, comment).
-- SQLite cannot drop a table constraint, so the table is rebuilt with the same rows.
CREATE TABLE mentions_27 (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
    person_id           TEXT NOT NULL REFERENCES people(id),
    note_id             TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    block_id            TEXT NOT NULL,
    comment_id          TEXT REFERENCES comments(id) ON DELETE CASCADE,
    mentioned_by_kind   TEXT NOT NULL CHECK (mentioned_by_kind IN ('person', 'agent')),
    mentioned_by_id     TEXT NOT NULL,
    token_id            TEXT,
    origin              TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    read_at             TEXT
);
INSERT INTO mentions_27 (id, workspace_id, person_id, note_id, block_id, mentioned_by_kind, mentioned_by_id, token_id,
                         origin, created_at, read_at)
    SELECT id, workspace_id, person_id, note_id, block_id, mentioned_by_kind, mentioned_by_id, token_id, origin,
           created_at, read_at FROM mentions;
DROP TABLE mentions;
ALTER TABLE mentions_27 RENAME TO mentions;
CREATE UNIQUE INDEX mentions_once_per_block ON mentions (workspace_id, person_id, block_id) WHERE comment_id IS NULL;
CREATE UNIQUE INDEX mentions_once_per_comment ON mentions (workspace_id, person_id, comment_id)
    WHERE comment_id IS NOT NULL;
CREATE INDEX mentions_inbox ON mentions (workspace_id, person_id, id);
CREATE INDEX mentions_note ON mentions (note_id);
