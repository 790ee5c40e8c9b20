-- Version 4: links as typed edges with evidence, title history (aliases) and supersession.
--
-- `links` from version 1 was never written to; it is replaced by the edge table.
-- A link points at a note id once resolved; until then (a forward link to a
-- title no note has yet) `target_note_id` is NULL and `target_key`, the
-- normalised title, is how the write path finds it when that note appears.
-- Every new table is workspace-scoped: RLS enabled and forced, one policy, as in 0001.
-- (The application role's grants come from the bootstrap's GRANT … ON ALL TABLES.)

DROP TABLE links;

CREATE TABLE links (
    id                     text PRIMARY KEY,
    workspace_id           text NOT NULL,
    source_note_id         text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    source_block_id        text,
    target_note_id         text REFERENCES notes(id) ON DELETE SET NULL,
    target_title           text NOT NULL,
    target_key             text NOT NULL,
    type                   text NOT NULL,
    derivation             text NOT NULL CHECK (derivation IN ('text', 'api')),
    status                 text NOT NULL CHECK (status IN ('asserted', 'inferred')),
    confidence             double precision,
    evidence_text          text NOT NULL DEFAULT '',
    evidence_origin        text,
    evidence_review_state  text,
    created_by_kind        text NOT NULL,
    created_by_id          text NOT NULL,
    token_id               text,
    confirmed_by           text,
    confirmed_at           timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
CREATE INDEX links_source ON links (workspace_id, source_note_id, id);
CREATE INDEX links_target ON links (workspace_id, target_note_id, id);
CREATE INDEX links_unresolved ON links (workspace_id, target_key) WHERE target_note_id IS NULL;

CREATE TABLE note_titles (
    workspace_id  text NOT NULL,
    note_id       text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    key           text NOT NULL,
    title         text NOT NULL,
    since         timestamptz NOT NULL,
    retired_at    timestamptz,
    PRIMARY KEY (note_id, key)
);
CREATE INDEX note_titles_key ON note_titles (workspace_id, key);

CREATE TABLE supersessions (
    workspace_id  text NOT NULL,
    note_id       text PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    successor_id  text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    link_id       text NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    created_at    timestamptz NOT NULL
);
CREATE INDEX supersessions_successor ON supersessions (workspace_id, successor_id);

-- Titles of notes written before this version. The owner running this script is
-- bound by forced RLS like everyone else, so `notes` is un-forced for the copy
-- and forced again in the same transaction. lower() may differ from the write
-- path's casefold outside ASCII; the write path recomputes the key of a note's
-- current title on its next write.
ALTER TABLE notes NO FORCE ROW LEVEL SECURITY;
INSERT INTO note_titles (workspace_id, note_id, key, title, since, retired_at)
    SELECT workspace_id, id, lower(btrim(title)), title, updated_at, NULL FROM notes WHERE btrim(title) <> '';
ALTER TABLE notes FORCE ROW LEVEL SECURITY;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['links', 'note_titles', 'supersessions']
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
