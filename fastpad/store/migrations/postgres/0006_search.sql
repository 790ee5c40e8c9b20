-- Version 6: search chunks and their embeddings (see sqlite/0006_search.sql for
-- what each column means).
--
-- Vectors are always kept as float32 bytes. When the `vector` extension can be
-- created (pgvector; it needs a superuser, and pgserver bundles it), a
-- `vector(384)` copy of each 384-dimension vector sits beside the bytes with an
-- HNSW index, and dense search runs in the database; otherwise the server keeps
-- an in-memory index built from the bytes, as on SQLite.
CREATE TABLE chunks (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL,
    note_id          text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    ordinal          integer NOT NULL,
    block_ids        jsonb NOT NULL,
    heading_path     jsonb NOT NULL,
    prefix           text NOT NULL,
    digest           text NOT NULL,
    provenance_mask  integer NOT NULL
);
CREATE INDEX chunks_note ON chunks (workspace_id, note_id, ordinal);
CREATE INDEX chunks_digest ON chunks (workspace_id, digest);

CREATE TABLE chunk_vectors (
    workspace_id  text NOT NULL,
    provider      text NOT NULL,
    digest        text NOT NULL,
    dimensions    integer NOT NULL,
    vector        bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, provider, digest)
);

DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pgvector is not available (%): dense search uses the in-memory index', SQLERRM;
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
        EXECUTE 'ALTER TABLE chunk_vectors ADD COLUMN embedding vector(384)';
        EXECUTE 'CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw (embedding vector_cosine_ops)';
    END IF;
END
$$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['chunks', 'chunk_vectors']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY workspace_isolation ON %I '
            'USING (workspace_id = current_setting(''app.workspace_id'', true)) '
            'WITH CHECK (workspace_id = current_setting(''app.workspace_id'', true))', t);
    END LOOP;
END
$$;
