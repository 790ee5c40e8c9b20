-- Version 20: a note's title and each of its properties carry provenance, as its blocks do.
--
-- A title is text an agent reads first — in every list, search hit, link and
-- export — so a title an auto-apply agent wrote, or a capture's first line, is
-- held to the reader's trust floor like the text it names (issue 29). Each write
-- that sets a title stamps it (NoteService._commit: the writer's origin; a person's
-- verification raises an import's). Existing notes take the origin of the write
-- that created them (the op log's first row); a title not a person's is reviewed
-- when every block of that origin in the note is (a verified import, an accepted
-- proposal), unreviewed otherwise. `property_provenance` maps each property that is
-- not a person's own to "origin|review state" (absent: a person's own), and existing
-- properties take their title's.

ALTER TABLE notes ADD COLUMN title_origin TEXT NOT NULL DEFAULT 'human_typed';
ALTER TABLE notes ADD COLUMN title_review_state TEXT NOT NULL DEFAULT 'human_accepted';
ALTER TABLE notes ADD COLUMN property_provenance TEXT NOT NULL DEFAULT '{}';

UPDATE notes SET title_origin = COALESCE((
    SELECT u.origin FROM note_updates u
    WHERE u.workspace_id = notes.workspace_id AND u.note_id = notes.id
    ORDER BY u.seq LIMIT 1
), 'human_typed');

UPDATE notes SET title_review_state = CASE
    WHEN EXISTS (SELECT 1 FROM blocks b WHERE b.workspace_id = notes.workspace_id AND b.note_id = notes.id
                 AND b.origin = notes.title_origin)
     AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.workspace_id = notes.workspace_id AND b.note_id = notes.id
                     AND b.origin = notes.title_origin AND b.review_state <> 'human_accepted')
    THEN 'human_accepted'
    ELSE 'unreviewed'
END
WHERE title_origin <> 'human_typed';

UPDATE notes SET property_provenance = (
    SELECT json_group_object(p.key, notes.title_origin || '|' || notes.title_review_state) FROM json_each(notes.properties) p
) WHERE title_origin <> 'human_typed' AND properties <> '{}';
