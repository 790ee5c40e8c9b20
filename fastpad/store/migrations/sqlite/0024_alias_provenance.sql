-- Version 24: a note's former titles (aliases) keep the provenance they had as its title.
--
-- An alias is listed to agents beside the note (the note's `aliases`, its links),
-- so an auto-apply agent's title that a person renamed away must stay held to the
-- reader's trust floor as it was while it was the title (issue 29). Each row of
-- `note_titles` now carries the (origin, review state) of that title, written by
-- the write path's link step whenever the title is set or restamped; when it is
-- retired the row keeps it. Existing rows take their note's title provenance
-- (version 22's stamp): the best that is known of them.

ALTER TABLE note_titles ADD COLUMN origin TEXT NOT NULL DEFAULT 'human_typed';
ALTER TABLE note_titles ADD COLUMN review_state TEXT NOT NULL DEFAULT 'human_accepted';

UPDATE note_titles SET
    origin = (SELECT n.title_origin FROM notes n WHERE n.id = note_titles.note_id),
    review_state = (SELECT n.title_review_state FROM notes n WHERE n.id = note_titles.note_id)
WHERE EXISTS (SELECT 1 FROM notes n WHERE n.id = note_titles.note_id);
