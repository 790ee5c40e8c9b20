-- Version 19: note titles in the lexical index (see sqlite/0019 for why).
--
-- A stored generated tsvector of the title beside the note, with a GIN index, as
-- blocks.tsv is for block text (version 2): computed in the statement that writes
-- the title, so a renamed note is found by its new words the moment it commits.

ALTER TABLE notes
    ADD COLUMN title_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, title)) STORED;
CREATE INDEX notes_title_tsv ON notes USING gin (title_tsv);
