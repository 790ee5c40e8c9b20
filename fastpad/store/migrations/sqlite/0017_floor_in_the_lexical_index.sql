-- Version 17: the workspace and the trust floor inside the lexical ranking.
--
-- The FTS5 index is shared by every workspace and knows nothing of provenance, so
-- a search ranked every match and dropped afterwards what the caller may not see:
-- at an agent's floor over a mostly imported workspace nearly every match was
-- ranked, dropped, and ranked again in a wider window. A second column, `scope`,
-- holds two tokens per block — its workspace and its (origin, review state) pair,
-- each hex-spelled and ending in a digit so no tokenizer stemming touches them —
-- and the lexical query ANDs the caller's workspace and admitted pairs onto its
-- terms (SearchIndex.lexical_blocks), so only blocks the caller may see are ranked.
-- bm25 weighs the column 0: it changes no block's score.

ALTER TABLE blocks ADD COLUMN scope TEXT GENERATED ALWAYS AS (
    'w' || hex(workspace_id) || '0 p' || hex(origin || '|' || review_state) || '0'
) VIRTUAL;

DROP TRIGGER blocks_fts_insert;
DROP TRIGGER blocks_fts_delete;
DROP TRIGGER blocks_fts_update;
DROP TABLE blocks_fts;

CREATE VIRTUAL TABLE blocks_fts USING fts5(
    text,
    scope,
    content = 'blocks',
    content_rowid = 'rid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN
    INSERT INTO blocks_fts (rowid, text, scope) VALUES (new.rid, new.text, new.scope);
END;

CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
    INSERT INTO blocks_fts (blocks_fts, rowid, text, scope) VALUES ('delete', old.rid, old.text, old.scope);
END;

CREATE TRIGGER blocks_fts_update AFTER UPDATE OF text, origin, review_state ON blocks BEGIN
    INSERT INTO blocks_fts (blocks_fts, rowid, text, scope) VALUES ('delete', old.rid, old.text, old.scope);
    INSERT INTO blocks_fts (rowid, text, scope) VALUES (new.rid, new.text, new.scope);
END;

INSERT INTO blocks_fts (blocks_fts) VALUES ('rebuild');
