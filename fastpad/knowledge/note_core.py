"""What every part of NoteService shares: its dependencies, the one write path
(``_commit``), a note's row as a writer or reader may reach it, and its view.

``_commit`` is the single write path: every write — create, ops, rename, archive/unarchive,
trash/restore, a review's edit — ends in it, and it runs the store's ``write_note`` (op log,
note row, block projection, lexical index, change feed) and then the link, search and property
steps in the caller's transaction: all of them commit together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fastpad.errors import Conflict, FieldError, NotFound, PolicyDenied, ValidationFailed
from fastpad.knowledge.link_projection import project_links
from fastpad.knowledge.mentions import project_mentions
from fastpad.knowledge.note_views import NoteView
from fastpad.knowledge.property_index import index_note_properties
from fastpad.notes import Block, UpdateLimits, is_ulid
from fastpad.notes.blocks import MAX_TITLE_CHARS
from fastpad.notes.provenance import Origin, Provenance
from fastpad.search.indexing import index_note_chunks, lexical_text
from fastpad.security.principals import Principal
from fastpad.store import BlockRow, NoteRow, NoteWrite, Store, WorkspaceTx, utcnow

if TYPE_CHECKING:  # the review package builds on this one
    from fastpad.review.turns import Turn


class NoteCore:
    """NoteService's dependencies, its single write path and the note rows and views every part
    of it reads (:class:`fastpad.knowledge.notes.NoteService`)."""

    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow,
                 limits: UpdateLimits = UpdateLimits()) -> None:
        self.store = store
        self.clock = clock
        self.limits = limits
        # How an agent's new note becomes a turn: a proposal, or under auto-apply a note that
        # landed on the agent's authority (``ReviewService.create_note``; the deployment wires
        # it, since the review package builds on this one). Unwired, agents cannot create notes.
        self.agent_creations: Callable[[Principal, dict[str, Any]], "NoteView | Turn"] | None = None

    @staticmethod
    def _commit(tx: WorkspaceTx, write: NoteWrite, *, previous_blocks: list[BlockRow] | None = None,
                names_stamp: Provenance | None = None) -> int:
        """The single write path (see the module docstring); the link step
        (titles, aliases, edges from block text), the mention step (each newly mentioned
        member's Inbox entry, ``knowledge/mentions.py``), the search step (the note's
        chunks) and the property step (its types and typed values) follow in
        the same transaction. A title the write changes is stamped with its writer's
        provenance, as a block is, and so is each property it changes (:func:`_with_names_stamped`;
        ``names_stamp`` when the writer lands someone else's words, as a turn's accept does)."""
        # Every way a title arrives — a create, a rename, frontmatter, a Loro update that sets the
        # note's meta — ends here, so the published limit holds for all of them.
        check_title(write.title)
        seq = tx.write_note(_with_names_stamped(tx, write, names_stamp), previous_blocks=previous_blocks,
                            lexical=lexical_text)
        project_links(tx, write)
        project_mentions(tx, write)
        index_note_chunks(tx, write)
        index_note_properties(tx, write)
        return seq

    @staticmethod
    def _writable_row(tx: WorkspaceTx, principal: Principal, note_id: str, *, with_snapshot: bool = False,
                      allow_trashed: bool = False) -> NoteRow:
        row = visible_note(tx, principal, note_id, with_snapshot=with_snapshot, for_update=True)
        if row.trashed_at is not None and not allow_trashed:
            raise Conflict(detail="the note is in the trash; restore it before changing it",
                           extra={"reason": "trashed"}, next_call=f"POST /v1/notes/{note_id}/restore")
        return row

    @staticmethod
    def view_in(tx: WorkspaceTx, principal: Principal, note_id: str) -> NoteView:
        require_reachable(principal, note_id)
        row = tx.note(note_id)
        if row is None:
            raise not_found(note_id)
        blocks = [
            {"id": b.block_id, "type": b.type, "text": b.text, "attrs": b.attrs, "origin": b.origin,
             "review_state": b.review_state}
            for b in tx.blocks(note_id)
        ]
        return NoteView(
            id=row.id, title=row.title, types=tuple(row.types), properties=row.properties, frontier=row.frontier,
            blocks=blocks, archived=row.archived_at is not None, trashed=row.trashed_at is not None,
            created_at=row.created_at, updated_at=row.updated_at, archived_at=row.archived_at,
            trashed_at=row.trashed_at,
        )


def check_title(title: str | None) -> None:
    if title is not None and len(title) > MAX_TITLE_CHARS:
        raise ValidationFailed(
            detail=f"A note's title is at most {MAX_TITLE_CHARS} characters; this one has {len(title)}.",
            field_errors=[FieldError("title", "max_length", f"at most {MAX_TITLE_CHARS} characters")],
        )


def not_found(note_id: str) -> NotFound:
    return NotFound(detail=f"no note {note_id}", extra={"note_id": note_id}, next_call="GET /v1/notes")


def visible_note(tx: WorkspaceTx, principal: Principal, note_id: str, *, for_update: bool = False,
                 with_snapshot: bool = False) -> NoteRow:
    """The note's row, for a service acting on a note the caller names: not-found for a malformed
    or missing id, out-of-scope (before any lookup) for one outside the caller's note set."""
    require_reachable(principal, note_id)
    row = tx.note(note_id, with_snapshot=with_snapshot, for_update=for_update)
    if row is None:
        raise not_found(note_id)
    return row


def require_reachable(principal: Principal, note_id: str) -> None:
    """Before any lookup: a malformed id names no note; one outside the note set is out-of-scope."""
    if not is_ulid(note_id):
        raise not_found(note_id)
    principal.require_note(note_id)


def block_row(block: Block, position: int, stamp: Provenance) -> BlockRow:
    assert block.id is not None
    return BlockRow(block.id, position, block.type, block.text, dict(block.attrs), stamp.origin.value,
                    stamp.review.value)


def _with_names_stamped(tx: WorkspaceTx, write: NoteWrite, stamp: Provenance | None = None) -> NoteWrite:
    """``write`` with the provenance of the title and properties it sets, where it does not stamp
    them itself: a new note's, or ones that differ from what is stored, are its writer's — a
    person's own, an agent's unreviewed (auto-apply, its own accept), an import's or a capture's
    untrusted; a turn's accept stamps the agent's with the accept's review state — and are held
    to a reader's trust floor by that; a property it keeps keeps its own. A person's rename or
    edit of a property makes it theirs."""
    setting_title = write.title is not None and write.title_provenance is None
    setting_properties = write.properties is not None and write.property_provenance is None
    if not (setting_title or setting_properties):
        return write
    row = None if write.kind == "create" else tx.note(write.note_id)
    if write.kind != "create" and row is None:
        return write
    stamp = stamp or Provenance.for_write(Origin(write.actor.origin))
    pair = (stamp.origin.value, stamp.review.value)
    persons_own = stamp == Provenance.for_write(Origin.HUMAN_TYPED)
    changes: dict[str, Any] = {}
    if setting_title and (row is None or row.title != write.title):
        changes["title_provenance"] = pair
    if setting_properties and (row is None or row.properties != write.properties):
        before = {} if row is None else row.properties
        kept = {} if row is None else tx.name_provenance([write.note_id])[write.note_id].properties
        assert write.properties is not None
        stamped = {}
        for name, value in write.properties.items():
            if name in before and before[name] == value:
                if name in kept:
                    stamped[name] = kept[name]
            elif not persons_own:
                stamped[name] = pair
        changes["property_provenance"] = stamped
    return replace(write, **changes) if changes else write


def refuse_agents(principal: Principal, note_id: str, *, detail: str, next_call: str) -> None:
    """An agent changes a note's prose only by proposing: a direct write of one is refused with
    ``agents_propose``, naming what it (or a person) may do instead."""
    if principal.kind == "agent":
        raise PolicyDenied(detail=detail, extra={"reason": "agents_propose", "note_id": note_id}, next_call=next_call)
