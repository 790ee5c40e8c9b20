-- Version 24: a note's former titles (aliases) keep the provenance they had as its title (see
-- sqlite/0024 for why; the statements are the same on both backends).

ALTER TABLE note_titles ADD COLUMN origin TEXT NOT NULL DEFAULT 'human_typed';
ALTER TABLE note_titles ADD COLUMN review_state TEXT NOT NULL DEFAULT 'human_accepted';

UPDATE note_titles SET
    origin = (SELECT n.title_origin FROM notes n WHERE n.id = note_titles.note_id),
    review_state = (SELECT n.title_review_state FROM notes n WHERE n.id = note_titles.note_id)
WHERE EXISTS (SELECT 1 FROM notes n WHERE n.id = note_titles.note_id);
