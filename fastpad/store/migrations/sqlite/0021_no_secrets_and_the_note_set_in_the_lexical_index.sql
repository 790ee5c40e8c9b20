-- Version 20: the lexical index holds no secret, and knows each block's note.
--
-- 1. What a search matches must not tell a reader what it sees masked: a correct
-- guess of a masked password found its note lexically, a wrong one did not. The
-- index now reads `blocks.lexical_text` — the block's text with every secret span
-- taken out (search/indexing.py), written by the statement that writes the text —
-- instead of `blocks.text`. A statement that has none sets it to NULL, which the
-- write path's search step fills in the same transaction: a block whose lexical
-- text was not computed is found by no word rather than by its secret. Rows written before this version
-- start NULL and are filled when the deployment opens (indexing.backfill_lexical_texts).
-- Titles alike: `notes.lexical_title`, written with the title, is what the
-- title index's mirror (`note_title_text`, migration 19) now holds.
--
-- 2. The note set inside the ranking: `scope` gains a third token, the block's note
-- (hex-spelled as the others), so a token limited to some notes ranks only their
-- blocks (SearchIndex.lexical_blocks) rather than every match in the workspace,
-- dropped after: a word only out-of-scope notes hold cost ten times a word no note
-- holds. Titles' scope gains the same token.

DROP TRIGGER blocks_fts_insert;
DROP TRIGGER blocks_fts_delete;
DROP TRIGGER blocks_fts_update;
DROP TABLE blocks_fts;

ALTER TABLE blocks ADD COLUMN lexical_text TEXT;
ALTER TABLE blocks DROP COLUMN scope;
ALTER TABLE blocks ADD COLUMN scope TEXT GENERATED ALWAYS AS (
    'w' || hex(workspace_id) || '0 p' || hex(origin || '|' || review_state) || '0 n' || hex(note_id) || '0'
) VIRTUAL;
CREATE INDEX blocks_without_lexical_text ON blocks (workspace_id, note_id) WHERE lexical_text IS NULL;

CREATE VIRTUAL TABLE blocks_fts USING fts5(
    lexical_text,
    scope,
    content = 'blocks',
    content_rowid = 'rid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN
    INSERT INTO blocks_fts (rowid, lexical_text, scope) VALUES (new.rid, new.lexical_text, new.scope);
END;

CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
    INSERT INTO blocks_fts (blocks_fts, rowid, lexical_text, scope) VALUES ('delete', old.rid, old.lexical_text, old.scope);
END;

CREATE TRIGGER blocks_fts_update AFTER UPDATE OF lexical_text, origin, review_state ON blocks BEGIN
    INSERT INTO blocks_fts (blocks_fts, rowid, lexical_text, scope) VALUES ('delete', old.rid, old.lexical_text, old.scope);
    INSERT INTO blocks_fts (rowid, lexical_text, scope) VALUES (new.rid, new.lexical_text, new.scope);
END;

INSERT INTO blocks_fts (blocks_fts) VALUES ('rebuild');

DROP TRIGGER note_title_fts_insert;
DROP TRIGGER note_title_fts_delete;
DROP TRIGGER note_title_fts_update;
DROP TABLE note_title_fts;

DROP TRIGGER notes_title_insert;
DROP TRIGGER notes_title_update;
ALTER TABLE notes ADD COLUMN lexical_title TEXT;
CREATE INDEX notes_without_lexical_title ON notes (workspace_id) WHERE lexical_title IS NULL;
UPDATE note_title_text SET title = '';

CREATE TRIGGER notes_title_insert AFTER INSERT ON notes BEGIN
    INSERT INTO note_title_text (note_id, workspace_id, title)
    VALUES (new.id, new.workspace_id, coalesce(new.lexical_title, ''));
END;

CREATE TRIGGER notes_title_update AFTER UPDATE OF lexical_title ON notes
WHEN new.lexical_title IS NOT old.lexical_title BEGIN
    UPDATE note_title_text SET title = coalesce(new.lexical_title, '') WHERE note_id = new.id;
END;

ALTER TABLE note_title_text DROP COLUMN scope;
ALTER TABLE note_title_text ADD COLUMN scope TEXT GENERATED ALWAYS AS (
    'w' || hex(workspace_id) || '0 n' || hex(note_id) || '0'
) VIRTUAL;

CREATE VIRTUAL TABLE note_title_fts USING fts5(
    title,
    scope,
    content = 'note_title_text',
    content_rowid = 'rid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER note_title_fts_insert AFTER INSERT ON note_title_text BEGIN
    INSERT INTO note_title_fts (rowid, title, scope) VALUES (new.rid, new.title, new.scope);
END;

CREATE TRIGGER note_title_fts_delete AFTER DELETE ON note_title_text BEGIN
    INSERT INTO note_title_fts (note_title_fts, rowid, title, scope) VALUES ('delete', old.rid, old.title, old.scope);
END;

CREATE TRIGGER note_title_fts_update AFTER UPDATE OF title ON note_title_text BEGIN
    INSERT INTO note_title_fts (note_title_fts, rowid, title, scope) VALUES ('delete', old.rid, old.title, old.scope);
    INSERT INTO note_title_fts (rowid, title, scope) VALUES (new.rid, new.title, new.scope);
END;

INSERT INTO note_title_fts (note_title_fts) VALUES ('rebuild');
