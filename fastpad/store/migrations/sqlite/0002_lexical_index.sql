-- Version 2: the lexical index over block text.
--
-- An FTS5 external-content table over blocks(text), kept in step by triggers,
-- so every statement that changes the projection changes the index in the same
-- transaction: a committed write is searchable the moment it commits.
-- `rebuild` indexes the blocks a version-1 database already holds.

CREATE VIRTUAL TABLE blocks_fts USING fts5(
    text,
    content = 'blocks',
    content_rowid = 'rid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN
    INSERT INTO blocks_fts (rowid, text) VALUES (new.rid, new.text);
END;

CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
    INSERT INTO blocks_fts (blocks_fts, rowid, text) VALUES ('delete', old.rid, old.text);
END;

CREATE TRIGGER blocks_fts_update AFTER UPDATE OF text ON blocks BEGIN
    INSERT INTO blocks_fts (blocks_fts, rowid, text) VALUES ('delete', old.rid, old.text);
    INSERT INTO blocks_fts (rowid, text) VALUES (new.rid, new.text);
END;

INSERT INTO blocks_fts (blocks_fts) VALUES ('rebuild');
