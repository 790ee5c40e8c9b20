"""A note's name and state: renaming it (the old title stays an alias, so links keep resolving),
archiving and unarchiving it (a person's act), and moving it to the trash and back."""

from __future__ import annotations

from fastpad.errors import FieldError, PolicyDenied, ValidationFailed
from fastpad.knowledge.note_core import NoteCore, refuse_agents
from fastpad.knowledge.note_views import NoteView
from fastpad.notes import NoteDocument, NoteMeta
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_DELETE, NOTES_WRITE
from fastpad.store import NoteWrite, WorkspaceTx


class NoteLifecycle(NoteCore):
    """Rename, archive/unarchive and trash/restore, each through the one write path."""

    def rename(self, principal: Principal, note_id: str, title: str) -> NoteView:
        """Give the note a new title. Links keep resolving: the old title becomes
        an alias, and links waiting for the new title resolve to this note."""
        principal.require(NOTES_WRITE)
        # A title is prose, and an agent changes prose only through proposals. The spec's seven op
        # kinds have no rename, so an agent (auto-apply or not) cannot rename; a person does. The
        # next call names what a person runs, not the proposals route, which cannot rename.
        refuse_agents(principal, note_id, detail=(
            "an agent changes a note only by proposing (fastpad_propose), and proposals cannot rename a note; "
            "ask a person to rename it"),
            next_call=f"ask a person to rename it (POST /v1/notes/{note_id}/rename from their own credential)")
        if not isinstance(title, str) or not title.strip():
            raise ValidationFailed(detail="a new title is needed",
                                   field_errors=[FieldError("title", "required", "a non-blank title")])
        with self.store.write(principal.workspace_id) as tx:
            row = self._writable_row(tx, principal, note_id, with_snapshot=True)
            assert row.snapshot is not None
            if row.title == title:
                return self.view_in(tx, principal, note_id)
            doc = NoteDocument.load(row.snapshot)
            meta = doc.meta
            doc.set_meta(NoteMeta(title, meta.types, meta.properties))
            self._commit(tx, NoteWrite(
                note_id=note_id, kind="rename", at=self.clock(), actor=principal.actor(),
                expected_frontier=row.frontier, update=doc.export_updates(row.frontier), snapshot=doc.snapshot(),
                frontier=doc.frontier(), title=title,
            ))
            return self.view_in(tx, principal, note_id)

    def archive(self, principal: Principal, note_id: str) -> NoteView:
        return self._set_state(principal, note_id, "archive")

    def unarchive(self, principal: Principal, note_id: str) -> NoteView:
        return self._set_state(principal, note_id, "unarchive")

    def trash(self, principal: Principal, note_id: str) -> NoteView:
        return self._set_state(principal, note_id, "trash")

    def restore(self, principal: Principal, note_id: str) -> NoteView:
        return self._set_state(principal, note_id, "restore")

    def trash_in(self, tx: WorkspaceTx, principal: Principal, note_id: str) -> NoteView:
        """:meth:`trash` inside the caller's transaction (a reverted proposal's event note)."""
        return self._set_state_in(tx, principal, note_id, "trash")

    def _set_state(self, principal: Principal, note_id: str, kind: str) -> NoteView:
        with self.store.write(principal.workspace_id) as tx:
            return self._set_state_in(tx, principal, note_id, kind)

    def _set_state_in(self, tx: WorkspaceTx, principal: Principal, note_id: str, kind: str) -> NoteView:
        if kind in ("archive", "unarchive"):
            principal.require(NOTES_WRITE)
            if not principal.is_person:
                # Spec, Concepts › Trash, archive and delete: archiving is something a person does.
                raise PolicyDenied(detail="archiving is something a person does, never an agent",
                                   extra={"reason": "person_only"})
        else:
            principal.require(NOTES_DELETE)
        now = self.clock()
        row = self._writable_row(tx, principal, note_id, allow_trashed=kind in ("trash", "restore"))
        field, value = {
            "archive": ("archived_at", now), "unarchive": ("archived_at", None),
            "trash": ("trashed_at", now), "restore": ("trashed_at", None),
        }[kind]
        if (getattr(row, field) is None) == (value is None):
            return self.view_in(tx, principal, note_id)  # already in that state: nothing to write
        self._commit(tx, NoteWrite(note_id=note_id, kind=kind, at=now, actor=principal.actor(),
                                   expected_frontier=row.frontier, **{field: value}))
        if kind == "trash":
            # A trashed note is no longer public; restoring it does not publish it again (a person
            # does, knowing what it holds now).
            tx.publications.unpublish(note_id)
        return self.view_in(tx, principal, note_id)
