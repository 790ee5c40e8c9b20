-- Version 19: note titles in the lexical index.
--
-- Until now only block text was indexed, so a word that stood only in a note's
-- title (a project's name, a ticket number) found the note lexically only when
-- the whole query was that title. Titles get an FTS5 index of their own, read
-- beside the blocks' one (SearchIndex.lexical_titles): a title is a field of the
-- note, not a block, and its own index keeps bm25's statistics of short titles
-- apart from those of paragraphs.
--
-- FTS5's external content needs an INTEGER PRIMARY KEY to point at (a table's
-- implicit rowid may be renumbered by VACUUM), and notes has none, so the titles
-- are mirrored into `note_title_text` by triggers on notes (`note_titles`, which
-- keeps former titles as aliases for links, has no such key either): every
-- statement that writes a note's title writes the index in the same transaction.
-- `scope` holds the workspace token, spelled as blocks.scope spells it
-- (migration 17).

CREATE TABLE note_title_text (
    rid           INTEGER PRIMARY KEY,
    note_id       TEXT NOT NULL UNIQUE,
    workspace_id  TEXT NOT NULL,
    title         TEXT NOT NULL,
    scope         TEXT GENERATED ALWAYS AS ('w' || hex(workspace_id) || '0') VIRTUAL
);

CREATE VIRTUAL TABLE note_title_fts USING fts5(
    title,
    scope,
    content = 'note_title_text',
    content_rowid = 'rid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER note_title_fts_insert AFTER INSERT ON note_title_text BEGIN
    INSERT INTO note_title_fts (rowid, title, scope) VALUES (new.rid, new.title, new.scope);
END;

CREATE TRIGGER note_title_fts_delete AFTER DELETE ON note_title_text BEGIN
    INSERT INTO note_title_fts (note_title_fts, rowid, title, scope) VALUES ('delete', old.rid, old.title, old.scope);
END;

CREATE TRIGGER note_title_fts_update AFTER UPDATE OF title ON note_title_text BEGIN
    INSERT INTO note_title_fts (note_title_fts, rowid, title, scope) VALUES ('delete', old.rid, old.title, old.scope);
    INSERT INTO note_title_fts (rowid, title, scope) VALUES (new.rid, new.title, new.scope);
END;

CREATE TRIGGER notes_title_insert AFTER INSERT ON notes BEGIN
    INSERT INTO note_title_text (note_id, workspace_id, title) VALUES (new.id, new.workspace_id, new.title);
END;

CREATE TRIGGER notes_title_update AFTER UPDATE OF title ON notes WHEN new.title IS NOT old.title BEGIN
    UPDATE note_title_text SET title = new.title WHERE note_id = new.id;
END;

CREATE TRIGGER notes_title_delete AFTER DELETE ON notes BEGIN
    DELETE FROM note_title_text WHERE note_id = old.id;
END;

INSERT INTO note_title_text (note_id, workspace_id, title) SELECT id, workspace_id, title FROM notes;
