-- Version 14: find a block by its id across the workspace.
--
-- A block id is unique across the workspace, not just within its note: a create
-- or import that carries anchors another note already holds mints fresh ids
-- for those blocks (WorkspaceTx.block_ids_held_elsewhere asks which). The
-- projection's own key is (note_id, block_id), which cannot answer that
-- without reading every block of the workspace.

CREATE INDEX blocks_workspace_block ON blocks (workspace_id, block_id);
