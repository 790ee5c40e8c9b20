"""Verifying an import: a person confirms an imported vault (or one folder of it) as theirs.

Imported text is ``inbound_untrusted`` and unreviewed, so no agent floor above the lowest
sees it, and its wikilinks are inferred edges no agent walks. Verifying it (spec: a
person-only act, like reviewing and publishing) marks each of its unreviewed blocks
``human_accepted`` — the origin stays ``inbound_untrusted``, and an agent's default floor
admits it: the person said "this is mine" — and its notes' titles likewise, and the link step
re-derives the edges those blocks write, which are then asserted. It goes through the one write path, a
``verify`` write per note, so the change feed records who verified what and when.

Undoing it (:meth:`ImportVerification.unverify`) returns the import's confirmed blocks to
``unreviewed`` (titles too), and their edges to inferred, unless a person confirmed an edge by itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from fastpad.errors import Conflict, FieldError, NotFound, ValidationFailed
from fastpad.knowledge.notes import NoteService
from fastpad.notes import is_ulid
from fastpad.notes.provenance import Origin, Provenance, ReviewState
from fastpad.security.principals import Principal
from fastpad.store import Store, utcnow

NOTES_PER_TRANSACTION = 100  # a large vault never holds the write lock for long
_INBOUND = Origin.INBOUND_UNTRUSTED.value


@dataclass(frozen=True)
class Verification:
    import_id: str
    folder: str | None
    notes: int  # notes of the import (in the folder) that exist
    blocks: int  # blocks whose review state changed
    asserted_links: int  # the import's text edges that are asserted afterwards

    def as_dict(self) -> dict[str, object]:
        return {"import_id": self.import_id, "folder": self.folder, "notes": self.notes, "blocks": self.blocks,
                "asserted_links": self.asserted_links}


class ImportVerification:
    def __init__(self, store: Store, notes: NoteService, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.notes = notes
        self.clock = clock

    def verify(self, principal: Principal, import_id: str, *, folder: str | None = None) -> Verification:
        """Mark the import's (or the folder's) unreviewed blocks reviewed by this person."""
        return self._restamp(principal, import_id, folder, "Verifying an import", "verify",
                             ReviewState.UNREVIEWED, ReviewState.HUMAN_ACCEPTED)

    def unverify(self, principal: Principal, import_id: str, *, folder: str | None = None) -> Verification:
        """Take a verification back: the import's confirmed blocks are unreviewed again."""
        return self._restamp(principal, import_id, folder, "Undoing an import's verification", "unverify",
                             ReviewState.HUMAN_ACCEPTED, ReviewState.UNREVIEWED)

    def _restamp(self, principal: Principal, import_id: str, folder: str | None, what: str, kind: str,
                 from_state: ReviewState, to_state: ReviewState) -> Verification:
        principal.require_signed_in(what)
        if folder is not None and (not isinstance(folder, str) or not folder.strip("/")):
            raise ValidationFailed(detail="folder is a path inside the archive, such as Projects/",
                                   field_errors=[FieldError("folder", "type", "a non-empty path")])
        prefix = None if folder is None else folder.strip("/") + "/"
        with self.store.read(principal.workspace_id) as tx:
            row = tx.imports.get(import_id) if is_ulid(import_id) else None
            if row is None:
                raise NotFound(detail=f"no import {import_id}", extra={"import_id": import_id})
            if row.status not in ("completed", "cancelled", "failed"):
                raise Conflict(detail="the import is still running; verify it once it has finished",
                               extra={"reason": row.status}, next_call=f"GET /v1/imports/{import_id}")
            note_ids = [note_id for item, note_id in tx.imports.imported_notes(import_id)
                        if prefix is None or item.startswith(prefix)]
        notes = blocks = asserted = 0
        for start in range(0, len(note_ids), NOTES_PER_TRANSACTION):
            with self.store.write(principal.workspace_id) as tx:
                for note_id in note_ids[start:start + NOTES_PER_TRANSACTION]:
                    note = tx.note(note_id)
                    if note is None or note.trashed_at is not None:
                        continue  # deleted or put away since: nothing to verify there
                    notes += 1
                    restamped = {b.block_id: Provenance(Origin.INBOUND_UNTRUSTED, to_state) for b in tx.blocks(note_id)
                                 if b.origin == _INBOUND and b.review_state == from_state.value}
                    names = tx.name_provenance([note_id])[note_id].moved((_INBOUND, from_state.value),
                                                                        (_INBOUND, to_state.value))
                    if restamped or names:
                        self.notes.apply_edit(tx, principal, note_id, lambda doc, stamps=restamped: stamps, kind=kind,
                                              names=names)
                        blocks += len(restamped)
                    asserted += sum(1 for e in tx.links.text_edges(note_id) if e.status == "asserted")
        return Verification(import_id, folder, notes, blocks, asserted)

