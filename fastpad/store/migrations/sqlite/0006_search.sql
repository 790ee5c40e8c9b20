-- Version 6: search chunks and their embeddings.
--
-- `chunks` is the block-aligned chunking of each note (fastpad/search/chunker.py),
-- rewritten by the write path in the note's own transaction. It holds no text:
-- the blocks do. `digest` is the SHA-256 of what is embedded (prefix + text), so
-- a vector is stored once per digest and survives edits that leave its chunk alone.
-- `provenance_mask` has one bit per (origin, review state) pair present among the
-- chunk's blocks (fastpad/store/search_index.py), so a trust floor filters chunks
-- with one integer test.
CREATE TABLE chunks (
    id               TEXT PRIMARY KEY,      -- "<note id>:<hash of its block ids>"
    workspace_id     TEXT NOT NULL,
    note_id          TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    ordinal          INTEGER NOT NULL,
    block_ids        TEXT NOT NULL,         -- JSON array, document order
    heading_path     TEXT NOT NULL,         -- JSON array of heading texts
    prefix           TEXT NOT NULL,
    digest           TEXT NOT NULL,
    provenance_mask  INTEGER NOT NULL
);
CREATE INDEX chunks_note ON chunks (workspace_id, note_id, ordinal);
CREATE INDEX chunks_digest ON chunks (workspace_id, digest);

-- One float32 vector (little-endian) per (provider, digest). Written by the
-- embedding worker; a vector whose digest no chunk has any more is swept.
CREATE TABLE chunk_vectors (
    workspace_id  TEXT NOT NULL,
    provider      TEXT NOT NULL,
    digest        TEXT NOT NULL,
    dimensions    INTEGER NOT NULL,
    vector        BLOB NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (workspace_id, provider, digest)
);
