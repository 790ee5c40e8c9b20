-- Version 12: what an accept did outside the note's prose, so revert can undo all of it.
--
-- `turn_events.effects` is JSON holding ids and event windows, never note text. On an
-- accept (or a mark reviewed): the edges it inserted — add_edge ops and `cites` edges;
-- an edge that already existed is not listed, so a revert leaves it — the event notes
-- it created, and each event it moved with its window before and after. On a revert:
-- what became of each of those. Adding a column with a constant default changes no row,
-- so the append-only triggers are not involved.

ALTER TABLE turn_events ADD COLUMN effects TEXT NOT NULL DEFAULT '{}';
