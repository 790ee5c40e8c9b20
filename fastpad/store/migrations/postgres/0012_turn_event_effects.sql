-- Version 12: what an accept did outside the note's prose, so revert can undo all of it.
--
-- `turn_events.effects` holds ids and event windows, never note text. On an accept (or a
-- mark reviewed): the edges it inserted — add_edge ops and `cites` edges; an edge that
-- already existed is not listed, so a revert leaves it — the event notes it created, and
-- each event it moved with its window before and after. On a revert: what became of each
-- of those. A constant default is stored once in the catalogue and changes no row, so
-- the append-only trigger is not involved.

ALTER TABLE turn_events ADD COLUMN effects jsonb NOT NULL DEFAULT '{}';
