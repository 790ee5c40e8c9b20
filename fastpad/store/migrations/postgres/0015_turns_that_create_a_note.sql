-- Version 15: a turn may propose a note that does not exist yet.
--
-- An agent's new note is a proposal like any other edit: the turn holds the
-- note's id (minted when it is proposed), its title, types and properties
-- (`proposed_note`; NULL for a turn on an existing note) and its blocks as
-- insertions. Accepting it creates the note under that id and lands the
-- accepted blocks; rejecting it leaves no note behind. So `note_id` can no
-- longer reference notes(id): until the accept there is no row to reference.
-- Purging a note deletes its turns explicitly (TrashPurge), as the cascade did.

ALTER TABLE turns DROP CONSTRAINT turns_note_id_fkey;
ALTER TABLE turns ADD COLUMN proposed_note jsonb;
