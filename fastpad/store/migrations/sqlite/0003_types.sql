-- Version 3: types, typed properties, structured query, collections.
--
-- A note's types and properties live in its document (NoteMeta, round-tripped
-- as frontmatter); the tables below are projections of them kept in the same
-- transaction as every note write (fastpad/knowledge/property_index.py), plus
-- the workspace's schema and its saved views.

-- A type: its own properties and the types it extends (JSON, see fastpad/knowledge/schema.py).
CREATE TABLE type_defs (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    name          TEXT NOT NULL,
    extends       TEXT NOT NULL DEFAULT '[]',   -- JSON array of type names
    properties    TEXT NOT NULL DEFAULT '[]',   -- JSON array of {name, kind, options?, target?}
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (workspace_id, name)
);

-- Which types each note carries (every name in its document, defined or not).
CREATE TABLE note_type_tags (
    workspace_id  TEXT NOT NULL,
    note_id       TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    type_name     TEXT NOT NULL,
    PRIMARY KEY (workspace_id, type_name, note_id)
) WITHOUT ROWID;
CREATE INDEX note_type_tags_note ON note_type_tags (workspace_id, note_id);

-- One row per value of a typed property ("Type.name"), in the column of its
-- kind: text (text, url, select, each multi_select option, person, relation,
-- file), number (number, checkbox as 0/1) or time (date, datetime; UTC). A
-- property the note's types define but the note leaves empty has one row with
-- all three NULL, so "sorted, empties last" and has_not are index walks too.
-- Each row is in exactly one of the four partial indexes.
CREATE TABLE property_values (
    workspace_id  TEXT NOT NULL,
    note_id       TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    property      TEXT NOT NULL,
    position      INTEGER NOT NULL,             -- 0, or the option's place in a multi_select
    value_text    TEXT,
    value_num     REAL,
    value_time    TEXT,                         -- fixed-width UTC ISO 8601, like every timestamp here
    PRIMARY KEY (workspace_id, note_id, property, position)
) WITHOUT ROWID;
CREATE INDEX property_values_text ON property_values (workspace_id, property, value_text, note_id)
    WHERE value_text IS NOT NULL;
CREATE INDEX property_values_num ON property_values (workspace_id, property, value_num, note_id)
    WHERE value_num IS NOT NULL;
CREATE INDEX property_values_time ON property_values (workspace_id, property, value_time, note_id)
    WHERE value_time IS NOT NULL;
CREATE INDEX property_values_empty ON property_values (workspace_id, property, note_id)
    WHERE value_text IS NULL AND value_num IS NULL AND value_time IS NULL;

-- Sorting a query by a note's own fields walks these.
CREATE INDEX notes_title ON notes (workspace_id, title, id);
CREATE INDEX notes_created ON notes (workspace_id, created_at, id);
CREATE INDEX notes_updated ON notes (workspace_id, updated_at, id);

-- A collection is a saved question, never its answer: no rows are stored.
CREATE TABLE collections (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id),
    name             TEXT NOT NULL,
    layout           TEXT NOT NULL
                     CHECK (layout IN ('table', 'board', 'list', 'gallery', 'calendar', 'timeline')),
    query            TEXT NOT NULL,             -- JSON: type, filters, sort, group_by, include_archived
    layout_options   TEXT NOT NULL DEFAULT '{}',
    version          INTEGER NOT NULL DEFAULT 1,
    created_by_kind  TEXT NOT NULL,
    created_by_id    TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX collections_workspace ON collections (workspace_id, id);
