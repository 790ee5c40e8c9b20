"""Changing a note's blocks: a person's save as a Loro update (``apply_ops``, with the fast path
for an update that only edited some blocks' text), and a server-side edit inside the caller's
transaction, which is how a review lands (``apply_edit``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fastpad.errors import FieldError, StaleFrontier, ValidationFailed
from fastpad.knowledge.block_identity import changed_block_ids, check_block_identity, refuse_block_ids_held_elsewhere
from fastpad.knowledge.note_core import NoteCore, block_row, refuse_agents
from fastpad.knowledge.note_views import NoteEdit, OpsResult
from fastpad.knowledge.persons_save import PersonsSave, block_provenance
from fastpad.knowledge.property_rules import changed_value_errors, validation_failed
from fastpad.notes import Block, NoteDocument, NoteMeta
from fastpad.notes.frontier import decode_frontier
from fastpad.notes.provenance import Provenance, restamp
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_WRITE
from fastpad.store import BlockEdits, NoteRow, NoteWrite, WorkspaceTx
from fastpad.store.records import NameProvenance

MAX_PEER_ID = 64


class NoteEdits(NoteCore):
    """Edits of a note's blocks, each through the one write path."""

    def apply_ops(
        self,
        principal: Principal,
        note_id: str,
        *,
        ops: bytes,
        peer_id: str | None,
        expected_frontier: str,
    ) -> OpsResult:
        """Import one Loro update computed against ``expected_frontier``: a person's save, whose
        blocks take their provenance from :class:`PersonsSave` (never upward by accident).

        StaleFrontier (409, naming both frontiers) when the note has moved on;
        ValidationFailed (422) when the update is refused (size, atoms, mode,
        malformed, or a block without a unique ULID), leaving everything as it was.
        """
        principal.require(NOTES_WRITE)
        # Spec, API › Writing a note: "If you are an agent, do not use this route." A raw Loro update
        # is not a reviewable diff (it may touch any block, the title, the types), so it is not
        # turned into a turn: the agent proposes ops against the same note instead.
        refuse_agents(principal, note_id, next_call=f"POST /v1/notes/{note_id}/proposals", detail=(
            "an agent changes a note only by proposing; with an auto-apply token the proposal lands at once, "
            "stays unreviewed, and is listed on Agent activity"))
        if not isinstance(ops, (bytes, bytearray)):
            raise ValidationFailed(detail="ops must be bytes", field_errors=[FieldError("ops", "type", "Loro update bytes")])
        if peer_id is not None and (not isinstance(peer_id, str) or len(peer_id) > MAX_PEER_ID):
            raise ValidationFailed(detail="peerId is too long",
                                   field_errors=[FieldError("peerId", "max_length", f"at most {MAX_PEER_ID} characters")])
        decode_frontier(expected_frontier)  # malformed → 422 before anything else
        ops = bytes(ops)
        with self.store.write(principal.workspace_id) as tx:
            row = self._writable_row(tx, principal, note_id, with_snapshot=True)
            assert row.snapshot is not None
            doc = NoteDocument.load(row.snapshot)
            if expected_frontier != row.frontier and not (
                doc.knows(expected_frontier) and doc.compare(expected_frontier, row.frontier) == "equal"
            ):
                raise StaleFrontier(
                    detail="the note changed since that frontier was read; re-read it and recompute the ops",
                    extra={"expected_frontier": expected_frontier, "current_frontier": row.frontier},
                    next_call=f"GET /v1/notes/{note_id}",
                )
            frontier, edited = doc.import_update(ops, self.limits)
            if frontier == row.frontier:
                return OpsResult(row.frontier, note_id)  # nothing new: the note already held every op
            if edited is not None and self._commit_text_edits(tx, principal, row, doc, ops, peer_id, frontier, edited):
                return OpsResult(frontier, note_id)
            before = tx.blocks(note_id)
            after = doc.blocks()
            check_block_identity(after)
            refuse_block_ids_held_elsewhere(tx, note_id, before, after)
            changed = changed_block_ids(before, after)
            current = {b.block_id: block_provenance(b) for b in before}
            provenance = restamp(current, changed, [b.id for b in after],
                                 PersonsSave(tx, principal, note_id, doc, current, before).stamp)
            meta = doc.meta
            if errors := changed_value_errors(tx, principal, NoteMeta(row.title, row.types, row.properties), meta):
                raise validation_failed(errors)  # a frontmatter edit (fp push) holds values to the typed API's rules
            self._commit(tx, NoteWrite(
                note_id=note_id, kind="ops", at=self.clock(), actor=principal.actor(),
                expected_frontier=row.frontier, update=ops, peer_id=peer_id, snapshot=doc.snapshot(),
                frontier=frontier, title=meta.title, types=meta.types, properties=meta.properties,
                blocks=[block_row(b, i, provenance[b.id]) for i, b in enumerate(after)],
            ), previous_blocks=before)
        return OpsResult(frontier, note_id)

    def _commit_text_edits(self, tx: WorkspaceTx, principal: Principal, row: NoteRow, doc: NoteDocument, ops: bytes,
                           peer_id: str | None, frontier: str, edited: Mapping[int, Block]) -> bool:
        """``apply_ops`` for an import that only edited the text of the blocks in ``edited``
        (``NoteDocument.import_update``): the same write, computed from those blocks alone —
        the others, the note's metadata and every block's position are as stored. False,
        having written nothing, when the stored rows do not match that picture (the caller
        then compares every block)."""
        previous = {b.block_id: b for b in tx.blocks_by_id(row.id, (b.id for b in edited.values() if b.id))}
        current = {block_id: block_provenance(b) for block_id, b in previous.items()}
        persons_save = PersonsSave(tx, principal, row.id, doc, current)
        rows, before = [], []
        for position, block in sorted(edited.items()):
            old = previous.get(block.id or "")
            if old is None or old.position != position:
                return False
            if (old.type, old.text, old.attrs) != (block.type, block.text, block.attrs):
                rows.append(block_row(block, position, persons_save.stamp(old.block_id)))
                before.append(old)
        self._commit(tx, NoteWrite(
            note_id=row.id, kind="ops", at=self.clock(), actor=principal.actor(), expected_frontier=row.frontier,
            update=ops, peer_id=peer_id, snapshot=doc.snapshot(), frontier=frontier,
            block_edits=BlockEdits(rows, before),
        ))
        return True

    def apply_edit(
        self,
        tx: WorkspaceTx,
        principal: Principal,
        note_id: str,
        edit: Callable[[NoteDocument], Mapping[str, Provenance] | None],
        *,
        stamp: Provenance | None = None,
        kind: str = "review",
        names: NameProvenance | None = None,
    ) -> NoteEdit:
        """A server-side edit made inside the caller's transaction, through the one write path:
        how a review lands (accept, revert, mark reviewed). The caller has authorised it; the
        note must be one ``principal`` can see and not in the trash.

        ``edit`` changes the loaded note (or not) and may return provenance for particular
        blocks, changed or not; other blocks it changes or adds take ``stamp``; every other
        block keeps its own. ``names`` restamps the title and properties (a verification raising
        an import's). Nothing to change writes nothing."""
        row = self._writable_row(tx, principal, note_id, with_snapshot=True)
        assert row.snapshot is not None
        doc = NoteDocument.load(row.snapshot)
        before = tx.blocks(note_id)
        stamps = edit(doc) or {}
        frontier, after = doc.frontier(), doc.blocks()
        check_block_identity(after)
        changed = changed_block_ids(before, after)
        if stamp is None and changed - set(stamps):
            raise ValueError("an edit that changes blocks needs the provenance to stamp them with")
        current = {b.block_id: block_provenance(b) for b in before}
        provenance = restamp(current, changed, [b.id for b in after], lambda _: stamp)  # type: ignore[arg-type]
        provenance.update({block_id: p for block_id, p in stamps.items() if block_id in provenance})
        result = NoteEdit(row.frontier, frontier, before)
        if frontier == row.frontier and names is None and all(
                provenance[b.id] == current.get(b.id) for b in after):
            return result
        moved = frontier != row.frontier
        meta = doc.meta
        self._commit(tx, NoteWrite(
            note_id=note_id, kind=kind, at=self.clock(), actor=principal.actor(), expected_frontier=row.frontier,
            update=doc.export_updates(row.frontier) if moved else None, snapshot=doc.snapshot() if moved else None,
            frontier=frontier if moved else None, title=meta.title, types=meta.types, properties=meta.properties,
            title_provenance=None if names is None else names.title,
            property_provenance=None if names is None else names.properties,
            blocks=[block_row(b, i, provenance[b.id]) for i, b in enumerate(after)],
        ), previous_blocks=before, names_stamp=stamp)
        return result
