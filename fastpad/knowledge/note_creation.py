"""Creating notes: a person's or an inbound note, drafted and checked before anything is written
(block ids no other note holds, values held to the property rules), under a fresh id or one
minted earlier; a proposed note created when its turn lands; batches; and an agent's new note,
which is a proposal (``agent_creations``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastpad.errors import Conflict, FastpadError, FieldError, PolicyDenied, ValidationFailed
from fastpad.knowledge.block_identity import mint_block_ids, reassign_block_ids_held_elsewhere
from fastpad.knowledge.note_core import NoteCore, block_row, check_title
from fastpad.knowledge.note_views import NoteDraft, NoteView
from fastpad.knowledge.persons_save import carried_from_workspace
from fastpad.knowledge.property_rules import changed_value_errors, validation_failed
from fastpad.notes import Block, NoteDocument, NoteMeta, is_ulid, new_id, parse_markdown
from fastpad.notes.blocks import heading_title
from fastpad.notes.provenance import Origin, Provenance
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_WRITE
from fastpad.store import NoteWrite, WorkspaceTx

if TYPE_CHECKING:  # the review package builds on this one
    from fastpad.review.turns import Turn

MAX_BATCH = 100  # notes in one create_many call
_CREATES_NO_NOTES = "this credential is limited to a set of notes and cannot create new ones"


class NoteCreation(NoteCore):
    """New notes, each through the one write path."""

    def create(self, principal: Principal, **fields: Any) -> "NoteView | Turn":
        """A new note, in a transaction of its own: :meth:`create_in`.

        An agent's own words are prose, and an agent changes prose only through review: its note
        is a proposal a person accepts or rejects (the pending :class:`Turn` is returned), or,
        under auto-apply, lands at once, unreviewed, as a turn on Agent activity (the note is
        returned) — both through :attr:`agent_creations`. Inbound content an agent only carries
        — a capture, an import — is not its words and is created directly, ``inbound_untrusted``."""
        if principal.kind == "agent" and principal.origin is Origin.AGENT_WRITTEN and not fields.get("inbound"):
            principal.require_whole_workspace(_CREATES_NO_NOTES)
            if fields.get("note_id") is not None:
                raise ValidationFailed(
                    detail="an agent's new note is a proposal: its id is minted when it is proposed, never chosen",
                    field_errors=[FieldError("id", "person_only", "omit it: a client-chosen id is for a person's note")],
                )
            if self.agent_creations is None:
                raise PolicyDenied(detail="agents cannot create notes on this server", extra={"reason": "agents_propose"})
            return self.agent_creations(principal, fields)
        with self.store.write(principal.workspace_id) as tx:
            return self.create_in(tx, principal, **fields)

    def draft(self, tx: WorkspaceTx, principal: Principal, note_id: str, *, title: str = "",
              markdown: str | None = None, blocks: Iterable[Block] | None = None, types: Iterable[str] = (),
              properties: Mapping[str, Any] | None = None, checked: bool = True) -> NoteDraft:
        """What a new note ``note_id`` would hold, checked as :meth:`create_in` checks it, without
        writing anything: its title (``title``, else the frontmatter's, else the first ``# Heading``'s:
        the heading stays a block, so the note's Markdown keeps it), types and properties, and its
        blocks, each with an id no other note holds (``reassigned_block_ids`` maps a taken id to its
        replacement). Its property values are held to ``property_rules`` unless ``checked`` is
        False (an import's or a capture's: outside text arrives as it was). A proposed note
        is drafted when it is proposed and created from the draft when it is accepted."""
        principal.require_whole_workspace(_CREATES_NO_NOTES)
        if markdown is not None and blocks is not None:
            raise ValidationFailed(detail="send markdown or blocks, not both",
                                   field_errors=[FieldError("blocks", "exclusive", "not together with markdown")])
        if markdown is not None:
            if not isinstance(markdown, str):
                raise ValidationFailed(detail="markdown must be text",
                                       field_errors=[FieldError("markdown", "type", "a string")])
            parsed = parse_markdown(markdown)
            meta, given = parsed.meta, list(parsed.blocks)
        else:
            meta, given = NoteMeta(), list(blocks or [])
        if not isinstance(title, str):
            raise ValidationFailed(detail="title must be text", field_errors=[FieldError("title", "type", "a string")])
        if isinstance(types, str):
            types = (types,)  # one type name is a list of one, never its characters
        types = tuple(types or ())
        if not all(isinstance(t, str) for t in types):
            raise ValidationFailed(detail="types is a list of type names",
                                   field_errors=[FieldError("types", "type", "a list of strings")])
        if properties is not None and not isinstance(properties, Mapping):
            raise ValidationFailed(detail="properties is an object",
                                   field_errors=[FieldError("properties", "type", "an object")])
        meta = NoteMeta(
            title=title or meta.title or heading_title(given),
            types=types or meta.types,
            properties=dict(properties) if properties is not None else dict(meta.properties),
        )
        check_title(meta.title)  # refused when proposed, not only when a proposed note lands
        if checked and (errors := changed_value_errors(tx, principal, None, meta)):
            raise validation_failed(errors)
        given, reassigned = reassign_block_ids_held_elsewhere(tx, note_id, mint_block_ids(given))
        return NoteDraft(meta, given, reassigned)

    def create_in(
        self,
        tx: WorkspaceTx,
        principal: Principal,
        *,
        note_id: str | None = None,
        inbound: bool = False,
        **fields: Any,
    ) -> NoteView:
        """A new note from Markdown or from blocks (not both), written inside the caller's
        transaction (an accepted proposal creates its event notes this way): :meth:`draft`'s
        ``fields``. Blocks without an id get a fresh ULID; ``title``/``types``/``properties``
        given here override the Markdown's frontmatter.

        A block id is unique across the workspace: a given id (an anchor in the Markdown, or
        ``Block.id``) that another note already holds — a pasted or copied note's anchors — gets
        a fresh ULID instead, and the returned view's ``reassigned_block_ids`` maps each such
        old id to its new one. Ids no other note holds are kept.

        ``note_id`` is an id minted earlier for this note — an import remembers the ids it
        minted, so a retry creates the same note with the same ids, an accepted proposal
        creates the note it proposed, and a note written in a browser before its author had an
        account is adopted under the id the browser gave it, so a second adoption of it (another
        tab, a retry under a new session) creates nothing. A note of this workspace that already
        has it is a Conflict (reason ``exists``); a note of another workspace, a Conflict with
        reason ``id_taken`` from the store (note ids are unique across the deployment). ``inbound``
        (an import's) says the content arrived from outside a keystroke: its blocks are
        ``inbound_untrusted`` whoever sends them (it can only lower trust, never raise it)."""
        principal.require(NOTES_WRITE)
        if note_id is not None and not is_ulid(note_id):
            raise ValidationFailed(detail="a note id is a ULID", field_errors=[FieldError("note_id", "ulid", "a ULID")])
        minted_earlier, note_id = note_id is not None, note_id or new_id()
        draft = self.draft(tx, principal, note_id, checked=not inbound, **fields)
        if minted_earlier and tx.note(note_id) is not None:
            raise Conflict(detail=f"a note {note_id} already exists", extra={"reason": "exists", "note_id": note_id},
                           next_call=f"GET /v1/notes/{note_id}")
        self._write_new(tx, principal, note_id, draft.meta, draft.blocks,
                        Origin.INBOUND_UNTRUSTED if inbound else principal.origin)
        return replace(self.view_in(tx, principal, note_id), reassigned_block_ids=draft.reassigned_block_ids)

    def create_proposed(self, tx: WorkspaceTx, principal: Principal, note_id: str, meta: NoteMeta,
                        stamp: Provenance) -> None:
        """The empty note a proposed new note's accepted blocks land in, under the id its turn
        minted, created by whoever accepts it: a person, or the agent itself under auto-apply or
        its own grant. The turn was the check (its ``notes:propose``), not ``notes:write``. Its title
        and properties are the proposing agent's, reviewed as the accept says (``stamp``)."""
        self._write_new(tx, principal, note_id, meta, [], principal.origin, names_stamp=stamp)

    def _write_new(self, tx: WorkspaceTx, principal: Principal, note_id: str, meta: NoteMeta, blocks: list[Block],
                   origin: Origin, *, names_stamp: Provenance | None = None) -> None:
        doc = NoteDocument.new(meta=meta, blocks=blocks)
        stamp = Provenance.for_write(origin)
        projection = [block_row(b, i, self._creation_stamp(tx, b, stamp)) for i, b in enumerate(doc.blocks())]
        self._commit(tx, NoteWrite(
            note_id=note_id, kind="create", at=self.clock(), actor=replace(principal.actor(), origin=origin.value),
            update=doc.export_updates(None),
            snapshot=doc.snapshot(), frontier=doc.frontier(), title=doc.meta.title, types=doc.meta.types,
            properties=doc.meta.properties, blocks=projection,
        ), previous_blocks=[], names_stamp=names_stamp)

    @staticmethod
    def _creation_stamp(tx: WorkspaceTx, block: Block, stamp: Provenance) -> Provenance:
        """A new note's block: ``stamp``, unless a person's new note carries another writer's text
        from elsewhere in the workspace (a duplicated file pushed by ``fp push``, a paste), which
        keeps that writer's provenance as a person's save does (``persons_save``)."""
        if stamp.origin is not Origin.HUMAN_TYPED:
            return stamp  # an agent's or an import's text is already below a person's own
        return carried_from_workspace(tx, block.text, stamp) or stamp

    def create_many(self, principal: Principal, items: list[dict[str, Any]]) -> list[NoteView | FastpadError]:
        """Create several notes, each in its own transaction: one refused item never
        holds back the others, and the caller gets a result or an error per item,
        in order. ``items`` are keyword arguments of :meth:`create`."""
        if not 1 <= len(items) <= MAX_BATCH:
            raise ValidationFailed(
                detail=f"a batch holds 1 to {MAX_BATCH} notes; send {len(items)} as several batches",
                field_errors=[FieldError("items", "length", f"between 1 and {MAX_BATCH} items")],
            )
        results: list[NoteView | FastpadError] = []
        for item in items:
            try:
                results.append(self.create(principal, **item))
            except FastpadError as error:
                results.append(error)
        return results
