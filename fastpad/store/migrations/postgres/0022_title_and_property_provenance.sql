-- Version 20: a note's title and properties carry provenance, as its blocks do (see sqlite/0020 for why
-- and how existing titles are stamped; the statements are the same on both backends).

ALTER TABLE notes ADD COLUMN title_origin TEXT NOT NULL DEFAULT 'human_typed';
ALTER TABLE notes ADD COLUMN title_review_state TEXT NOT NULL DEFAULT 'human_accepted';
ALTER TABLE notes ADD COLUMN property_provenance jsonb NOT NULL DEFAULT '{}';

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
    SELECT jsonb_object_agg(p.key, notes.title_origin || '|' || notes.title_review_state) FROM jsonb_each(notes.properties) p
) WHERE title_origin <> 'human_typed' AND properties <> '{}'::jsonb;
