-- Version 24: a note's former titles (aliases) keep the provenance they had as its title.
--
-- An alias is listed to agents beside the note (the note's `aliases`, its links),
-- so an auto-apply agent's title that a person renamed away must stay held to the
-- reader's trust floor as it was while it was the title (issue 29). Each row of
-- `note_titles` now carries the (origin, review state) of that title, written by
-- the write path's link step whenever the title is set or restamped; when it is
-- retired the row keeps it. Existing rows: see below.

ALTER TABLE note_titles ADD COLUMN origin TEXT NOT NULL DEFAULT 'human_typed';
ALTER TABLE note_titles ADD COLUMN review_state TEXT NOT NULL DEFAULT 'human_accepted';

-- The current title takes its note's title stamp.
UPDATE note_titles SET
    origin = (SELECT n.title_origin FROM notes n WHERE n.id = note_titles.note_id),
    review_state = (SELECT n.title_review_state FROM notes n WHERE n.id = note_titles.note_id)
WHERE retired_at IS NULL AND EXISTS (SELECT 1 FROM notes n WHERE n.id = note_titles.note_id);

-- A former title's writer is not recorded: it takes the origin of the write that created its note
-- (the op log's first row, as version 22 did for titles), unreviewed unless that was a person's.
-- A person's own rename of an agent's note is then held too: holding too much, never too little.
UPDATE note_titles SET origin = COALESCE((
    SELECT u.origin FROM note_updates u
    WHERE u.workspace_id = note_titles.workspace_id AND u.note_id = note_titles.note_id
    ORDER BY u.seq LIMIT 1
), 'human_typed')
WHERE retired_at IS NOT NULL;

UPDATE note_titles SET review_state = 'unreviewed' WHERE retired_at IS NOT NULL AND origin <> 'human_typed';
