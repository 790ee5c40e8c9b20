-- Version 20: the lexical index holds no secret.
--
-- What a search matches must not tell a reader what it sees masked: a correct
-- guess of a masked password found its note lexically, a wrong one did not.
-- `blocks.tsv` is now generated from `blocks.lexical_text` — the block's text with
-- every secret span taken out (search/indexing.py), written by the statement that
-- writes the text — instead of `blocks.text`. A statement that has none sets it to
-- NULL, which the write path's search step fills in the same transaction: a block
-- whose lexical text was not computed is found by no word rather than by its secret.
-- Rows written before this version start NULL and are filled when the deployment
-- opens (indexing.backfill_lexical_texts). Titles alike: `notes.title_tsv` is
-- generated from `notes.lexical_title`, written with the title.
--
-- The note set inside the ranking needs no column here: the lexical statement
-- names the note set on the blocks it ranks (SearchIndex._note_filter), which the
-- planner can answer from the blocks' (workspace, note) index (SQLite's FTS5
-- index needed a token for it: migrations/sqlite/0021).

ALTER TABLE blocks DROP COLUMN tsv;
ALTER TABLE blocks ADD COLUMN lexical_text text;
ALTER TABLE blocks
    ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, coalesce(lexical_text, ''))) STORED;
CREATE INDEX blocks_tsv ON blocks USING gin (tsv);
CREATE INDEX blocks_without_lexical_text ON blocks (workspace_id, note_id) WHERE lexical_text IS NULL;

ALTER TABLE notes DROP COLUMN title_tsv;
ALTER TABLE notes ADD COLUMN lexical_title text;
ALTER TABLE notes
    ADD COLUMN title_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, coalesce(lexical_title, ''))) STORED;
CREATE INDEX notes_title_tsv ON notes USING gin (title_tsv);
CREATE INDEX notes_without_lexical_title ON notes (workspace_id) WHERE lexical_title IS NULL;
