-- Version 3: types, typed properties, structured query, collections.
-- (Comments on each table: see sqlite/0003_types.sql.) Every table is
-- workspace-scoped: forced row-level security with the same policy as 0001.
-- Grants: the bootstrap grants the application role every table in the schema
-- on each start (fastpad/store/postgres.py), so these tables are covered.

CREATE TABLE type_defs (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id),
    name          text NOT NULL,
    extends       jsonb NOT NULL DEFAULT '[]',
    properties    jsonb NOT NULL DEFAULT '[]',
    version       integer NOT NULL DEFAULT 1,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE note_type_tags (
    workspace_id  text NOT NULL,
    note_id       text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    type_name     text NOT NULL,
    PRIMARY KEY (workspace_id, type_name, note_id)
);
CREATE INDEX note_type_tags_note ON note_type_tags (workspace_id, note_id);

-- value_text compares bytewise ("C"), as SQLite does: one order on both backends.
CREATE TABLE property_values (
    workspace_id  text NOT NULL,
    note_id       text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    property      text NOT NULL,
    position      integer NOT NULL,
    value_text    text COLLATE "C",
    value_num     double precision,
    value_time    timestamptz,
    PRIMARY KEY (workspace_id, note_id, property, position)
);
CREATE INDEX property_values_text ON property_values (workspace_id, property, value_text, note_id)
    WHERE value_text IS NOT NULL;
CREATE INDEX property_values_num ON property_values (workspace_id, property, value_num, note_id)
    WHERE value_num IS NOT NULL;
CREATE INDEX property_values_time ON property_values (workspace_id, property, value_time, note_id)
    WHERE value_time IS NOT NULL;
CREATE INDEX property_values_empty ON property_values (workspace_id, property, note_id)
    WHERE value_text IS NULL AND value_num IS NULL AND value_time IS NULL;

CREATE INDEX notes_title ON notes (workspace_id, title, id);
CREATE INDEX notes_created ON notes (workspace_id, created_at, id);
CREATE INDEX notes_updated ON notes (workspace_id, updated_at, id);

CREATE TABLE collections (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL REFERENCES workspaces(id),
    name             text NOT NULL,
    layout           text NOT NULL
                     CHECK (layout IN ('table', 'board', 'list', 'gallery', 'calendar', 'timeline')),
    query            jsonb NOT NULL,
    layout_options   jsonb NOT NULL DEFAULT '{}',
    version          integer NOT NULL DEFAULT 1,
    created_by_kind  text NOT NULL,
    created_by_id    text NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX collections_workspace ON collections (workspace_id, id);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['type_defs', 'note_type_tags', 'property_values', 'collections']
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
