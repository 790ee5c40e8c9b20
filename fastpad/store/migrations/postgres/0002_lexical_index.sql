-- Version 2: the lexical index over block text.
--
-- A stored generated tsvector plus a GIN index: PostgreSQL computes it in the
-- same statement that writes the block, so a committed write is searchable the
-- moment it commits. Adding the column computes it for existing rows.

ALTER TABLE blocks
    ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED;
CREATE INDEX blocks_tsv ON blocks USING gin (tsv);
