"""Provenance where a person reads: which blocks of a note no person ratified, and ratifying
one by looking at it.

A note's page marks the blocks an agent wrote that no person accepted (auto-applied, or
accepted by the agent itself under its grant) and text that came from outside (captures,
imports), with who wrote it and when — ``BlockReview.marked``. The mark is the cost of an
auto-apply grant, shown where the text is read.

Marking one such block reviewed (``BlockReview.mark_reviewed``) is a person's act on that
very block: it becomes ``human_accepted`` and keeps its origin, so it reaches agents at the
``reviewed`` floor but is never taken for the person's own typing. This is deliberately
narrower than marking a whole turn reviewed on Agent activity, which clears the queue without
promoting auto-applied blocks (spec: Agents › Reviewing a proposal): there the person vouched
for a turn, here for the text in front of them. It goes through the one write path (a
``review`` write), so the change feed records who ratified what and when.
"""

from __future__ import annotations

from fastpad.errors import NotFound
from fastpad.knowledge.history import BlockState
from fastpad.knowledge.note_core import visible_note
from fastpad.knowledge.notes import NoteService
from fastpad.notes import is_ulid
from fastpad.notes.provenance import Origin, Provenance, ReviewState
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import Store
from fastpad.store.block_history import BlockHistory


class BlockReview:
    def __init__(self, store: Store, notes: NoteService) -> None:
        self.store = store
        self.notes = notes

    def marked(self, principal: Principal, note_id: str) -> list[BlockState]:
        """The note's unratified and outside blocks, in order (see the module docstring)."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            visible_note(tx, principal, note_id)
            rows = BlockHistory(tx).marked(note_id)
        return [BlockState.from_row(row) for row in rows]

    def mark_reviewed(self, principal: Principal, note_id: str, block_id: str) -> BlockState:
        """The block, now reviewed by this person; one already reviewed is left as it is."""
        principal.require_signed_in("Marking a block reviewed")
        with self.store.write(principal.workspace_id) as tx:
            visible_note(tx, principal, note_id)
            history = BlockHistory(tx)
            row = history.block(note_id, block_id) if is_ulid(block_id) else None
            if row is None:
                raise NotFound(detail=f"no block {block_id} in note {note_id}",
                               extra={"note_id": note_id, "block_id": block_id},
                               next_call=f"GET /v1/notes/{note_id}")
            if row.review_state != ReviewState.HUMAN_ACCEPTED.value:
                reviewed = {block_id: Provenance(Origin(row.origin), ReviewState.HUMAN_ACCEPTED)}
                self.notes.apply_edit(tx, principal, note_id, lambda doc: reviewed, kind="review")
                row = history.block(note_id, block_id)
                assert row is not None
        return BlockState.from_row(row)
