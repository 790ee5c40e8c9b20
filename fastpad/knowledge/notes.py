"""NoteService: every read and write of notes, for a principal.

Every method takes the acting ``Principal`` first and enforces its scopes and
note set; a note outside the note set is OutOfScope, decided from the set
before anything is looked up (``Principal.require_note``), so it says nothing
about whether such a note exists. The workspace is always the principal's.

Every write — create, ops, archive/unarchive, trash/restore — goes through
``_commit``, the one call into ``WorkspaceTx.write_note``, inside one
transaction that also holds the note's row lock: op log append, note row,
block projection with provenance, lexical index and change-feed row commit
together or not at all. The ``*_in`` variants (``create_in``, ``trash_in``,
``apply_edit``) take the caller's transaction instead of opening one, so a
review can land several writes as one.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fastpad.errors import Conflict, FastpadError, FieldError, NotFound, PolicyDenied, StaleFrontier, ValidationFailed
from fastpad.knowledge.block_identity import (
    changed_block_ids,
    check_block_identity,
    mint_block_ids,
    reassign_block_ids_held_elsewhere,
    refuse_block_ids_held_elsewhere,
)
from fastpad.knowledge.link_projection import project_links
from fastpad.knowledge.mentions import project_mentions
from fastpad.knowledge.note_views import NoteDraft, NoteEdit, NotePage, NoteSummary, NoteView, OpsResult, as_blocks
from fastpad.knowledge.persons_save import PersonsSave, block_provenance, carried_from_workspace
from fastpad.knowledge.property_index import index_note_properties
from fastpad.knowledge.property_rules import changed_value_errors, validation_failed
from fastpad.knowledge.trust import TrustFloor, admits, filter_blocks, floor_for
from fastpad.notes import Block, NoteDocument, NoteMeta, UpdateLimits, is_ulid, new_id, parse_markdown, serialize_markdown
from fastpad.notes.blocks import MAX_TITLE_CHARS, heading_title
from fastpad.notes.frontier import decode_frontier
from fastpad.notes.provenance import Origin, Provenance, restamp
from fastpad.notes.schema import storable_text
from fastpad.outbound.titles import TITLE_BELOW_FLOOR, BelowFloor
from fastpad.search.indexing import index_note_chunks, lexical_text
from fastpad.security.audit import WORKSPACE_EXPORT, record
from fastpad.security.principals import Principal
from fastpad.security.scopes import EXPORT, NOTES_DELETE, NOTES_READ, NOTES_WRITE
from fastpad.store import BlockEdits, BlockRow, NoteRow, NoteWrite, Store, WorkspaceTx, utcnow
from fastpad.store.records import NameProvenance

if TYPE_CHECKING:  # the review package builds on this one
    from fastpad.review.turns import Turn

MAX_PAGE = 200
# Where an import found the note: the archive folder it sat in ("Projects/Alpha"), a property of
# its own so the vault's hierarchy outlives the import; ``list(folder=…)`` reads it.
SOURCE_FOLDER = "source_folder"
MAX_FOLDER = 1000
MAX_BATCH = 100  # notes in one create_many call
_CURSOR_PREFIX = "n1:"
MAX_PEER_ID = 64
_CREATES_NO_NOTES = "this credential is limited to a set of notes and cannot create new ones"


def _folder(value: Any) -> str:
    """A folder of an archive, as ``source_folder`` holds it: no leading or trailing '/'."""
    folder = value.strip().strip("/") if isinstance(value, str) else ""
    if not folder or len(folder) > MAX_FOLDER or not storable_text(folder):
        raise ValidationFailed(detail="folder is a path inside an imported archive, such as Projects/Alpha",
                               field_errors=[FieldError("folder", "type",
                                                        f"a non-empty path of at most {MAX_FOLDER} characters,"
                                                        " without U+0000")])
    return folder


class NoteService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow,
                 limits: UpdateLimits = UpdateLimits()) -> None:
        self.store = store
        self.clock = clock
        self.limits = limits
        # How an agent's new note becomes a turn: a proposal, or under auto-apply a note that
        # landed on the agent's authority (``ReviewService.create_note``; the deployment wires
        # it, since the review package builds on this one). Unwired, agents cannot create notes.
        self.agent_creations: Callable[[Principal, dict[str, Any]], "NoteView | Turn"] | None = None

    # ------------------------------------------------------------------ reads

    def list(
        self,
        principal: Principal,
        *,
        cursor: str | None = None,
        limit: int = 50,
        include_archived: bool = False,
        include_trashed: bool = False,
        folder: str | None = None,
    ) -> NotePage:
        """A keyset page of notes in id (= creation) order; follow ``next_cursor``. ``folder``:
        only the notes an import placed in that folder of its archive or beneath it
        (their ``source_folder``)."""
        principal.require(NOTES_READ)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_PAGE}")])
        within = None if folder is None else (SOURCE_FOLDER, _folder(folder))
        after = decode_cursor(cursor) if cursor is not None else None
        if principal.note_ids is not None and not principal.note_ids:
            return NotePage([], None)
        with self.store.read(principal.workspace_id) as tx:
            rows = tx.list_notes(after_id=after, limit=limit + 1, include_archived=include_archived,
                                 include_trashed=include_trashed, note_ids=principal.note_ids, within_folder=within)
            aliases = tx.links.aliases(r.id for r in rows[:limit])
        items = [NoteSummary.from_row(r, aliases.get(r.id, ())) for r in rows[:limit]]
        return NotePage(items, encode_cursor(items[-1].id) if len(rows) > limit else None)

    def get(self, principal: Principal, note_id: str) -> NoteView:
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            return self.view_in(tx, principal, note_id)

    def markdown(self, principal: Principal, note_id: str) -> str:
        """The note as canonical Markdown (a ``{#ULID}`` anchor after every block)."""
        view = self.get(principal, note_id)
        below = BelowFloor() if principal.is_person else self.names_below(principal, [view.id], floor_for(principal))
        return _markdown_for(principal, view, below)

    def export(self, principal: Principal) -> list[dict[str, Any]]:
        """Every note the credential sees, archived ones too, trashed ones not — id, title, frontier,
        archived and canonical Markdown — read in one transaction, so together they are one
        consistent version of the workspace. Bulk reads need the ``export`` scope; without it a
        credential reads notes one at a time."""
        principal.require(NOTES_READ, EXPORT)
        if principal.note_ids is not None and not principal.note_ids:
            return []
        exported, after = [], None
        with self.store.read(principal.workspace_id) as tx:
            while True:
                rows = tx.list_notes(after_id=after, limit=MAX_PAGE, include_archived=True, include_trashed=False,
                                     note_ids=principal.note_ids)
                below = BelowFloor() if principal.is_person else _names_below(tx, [r.id for r in rows],
                                                                              floor_for(principal))
                for row in rows:
                    view = self.view_in(tx, principal, row.id)
                    exported.append({"id": view.id, "title": view.title, "frontier": view.frontier,
                                     "archived": view.archived,
                                     "markdown": _markdown_for(principal, view, below)})
                if len(rows) < MAX_PAGE:
                    break
                after = rows[-1].id
        with self.store.write(principal.workspace_id) as tx:  # a read: its entry in a short write of its own
            record(tx, principal, WORKSPACE_EXPORT, details={"notes": len(exported)})
        return exported

    def names_below(self, principal: Principal, note_ids: Iterable[str], floor: TrustFloor) -> BelowFloor:
        """Of ``note_ids``, the titles and properties ``floor`` does not admit (an agent's
        unreviewed ones, a capture's or an unverified import's): what ``outbound.titles`` holds."""
        if floor == TrustFloor.ALL or not note_ids:
            return BelowFloor()
        with self.store.read(principal.workspace_id) as tx:
            return _names_below(tx, note_ids, floor)

    def export_updates(self, principal: Principal, note_id: str, *, since: str | None = None) -> tuple[bytes, str]:
        """The note's CRDT state for an editor acting for a person: every update
        since ``since`` (None: all of them, enough to rebuild the note) and the
        frontier it reaches. Agents read through the outbound path instead."""
        row = self._editor_row(principal, note_id)
        return NoteDocument.load(row.snapshot).export_updates(since), row.frontier

    def snapshot(self, principal: Principal, note_id: str) -> tuple[bytes, str]:
        """The note as its stored Loro snapshot (whole history and state) and its frontier: what
        an editor opens a note from. It costs the server nothing to produce, and a snapshot
        loads in a fraction of the time a replay of every update takes."""
        row = self._editor_row(principal, note_id)
        return row.snapshot, row.frontier

    def _editor_row(self, principal: Principal, note_id: str) -> NoteRow:
        principal.require(NOTES_READ)
        if not principal.is_person:
            raise PolicyDenied(
                detail="raw note state is for editors acting for a person; agents read notes as redacted Markdown",
                extra={"reason": "person_only"},
                next_call="fastpad_fetch",
            )
        with self.store.read(principal.workspace_id) as tx:
            _require_reachable(principal, note_id)
            row = tx.note(note_id, with_snapshot=True)
        if row is None:
            raise _not_found(note_id)
        assert row.snapshot is not None
        return row

    # ------------------------------------------------------------------ writes

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
        _check_title(meta.title)  # refused when proposed, not only when a proposed note lands
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
        projection = [_block_row(b, i, self._creation_stamp(tx, b, stamp)) for i, b in enumerate(doc.blocks())]
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
        if principal.kind == "agent":
            # Spec, API › Writing a note: "If you are an agent, do not use this route." A raw Loro
            # update is not a reviewable diff (it may touch any block, the title, the types), so it
            # is not turned into a turn: the agent proposes ops against the same note instead.
            raise PolicyDenied(
                detail=("an agent changes a note only by proposing; with an auto-apply token the proposal "
                        "lands at once, stays unreviewed, and is listed on Agent activity"),
                extra={"reason": "agents_propose", "note_id": note_id},
                next_call=f"POST /v1/notes/{note_id}/proposals",
            )
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
                blocks=[_block_row(b, i, provenance[b.id]) for i, b in enumerate(after)],
            ), previous_blocks=before)
        return OpsResult(frontier, note_id)

    def rename(self, principal: Principal, note_id: str, title: str) -> NoteView:
        """Give the note a new title. Links keep resolving: the old title becomes
        an alias, and links waiting for the new title resolve to this note."""
        principal.require(NOTES_WRITE)
        if principal.kind == "agent":
            # A title is prose, and an agent changes prose only through proposals. The spec's seven
            # op kinds have no rename, so an agent (auto-apply or not) cannot rename; a person does.
            # The next call names what a person runs, not the proposals route, which cannot rename.
            raise PolicyDenied(
                detail=("an agent changes a note only by proposing (fastpad_propose), and proposals cannot "
                        "rename a note; ask a person to rename it"),
                extra={"reason": "agents_propose", "note_id": note_id},
                next_call=f"ask a person to rename it (POST /v1/notes/{note_id}/rename from their own credential)",
            )
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
            blocks=[_block_row(b, i, provenance[b.id]) for i, b in enumerate(after)],
        ), previous_blocks=before, names_stamp=stamp)
        return result

    # ------------------------------------------------------------------ internals

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
                rows.append(_block_row(block, position, persons_save.stamp(old.block_id)))
                before.append(old)
        self._commit(tx, NoteWrite(
            note_id=row.id, kind="ops", at=self.clock(), actor=principal.actor(), expected_frontier=row.frontier,
            update=ops, peer_id=peer_id, snapshot=doc.snapshot(), frontier=frontier,
            block_edits=BlockEdits(rows, before),
        ))
        return True

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
        _check_title(write.title)
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
        _require_reachable(principal, note_id)
        row = tx.note(note_id)
        if row is None:
            raise _not_found(note_id)
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


def _check_title(title: str | None) -> None:
    if title is not None and len(title) > MAX_TITLE_CHARS:
        raise ValidationFailed(
            detail=f"A note's title is at most {MAX_TITLE_CHARS} characters; this one has {len(title)}.",
            field_errors=[FieldError("title", "max_length", f"at most {MAX_TITLE_CHARS} characters")],
        )


# ---------------------------------------------------------------------- helpers


def encode_cursor(note_id: str) -> str:
    return base64.urlsafe_b64encode((_CURSOR_PREFIX + note_id).encode()).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> str:
    bad = ValidationFailed(detail="cursor is not one this server returned",
                           field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back unchanged")])
    if not isinstance(cursor, str) or len(cursor) > 100:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    if not raw.startswith(_CURSOR_PREFIX) or not is_ulid(raw[len(_CURSOR_PREFIX):]):
        raise bad
    return raw[len(_CURSOR_PREFIX):]


def _markdown_for(principal: Principal, view: NoteView, below: BelowFloor) -> str:
    """A note's canonical Markdown as ``principal`` may read it: a reader who is not a person gets
    the blocks its trust floor admits, and nothing below it — its title and properties included."""
    shown = view.blocks if principal.is_person else filter_blocks(view.blocks, floor_for(principal))
    title = TITLE_BELOW_FLOOR if view.id in below.titles else view.title
    meta = NoteMeta(title, view.types, below.shown_properties(view.id, view.properties))
    return serialize_markdown(meta, as_blocks(shown))


def _names_below(tx: WorkspaceTx, note_ids: Iterable[str], floor: TrustFloor) -> BelowFloor:
    note_ids = list(note_ids)
    stamped = tx.name_provenance(note_ids)
    former = tx.links.alias_provenance(note_ids)
    return BelowFloor(
        aliases={n: below for n, titles in former.items()
                 if (below := frozenset(t for t, pair in titles.items() if not admits(floor, *pair)))},
        titles=frozenset(n for n, names in stamped.items() if not admits(floor, *names.title)),
        properties={n: below for n, names in stamped.items()
                    if (below := frozenset(k for k, pair in names.properties.items() if not admits(floor, *pair)))},
    )


def _not_found(note_id: str) -> NotFound:
    return NotFound(detail=f"no note {note_id}", extra={"note_id": note_id}, next_call="GET /v1/notes")


def visible_note(tx: WorkspaceTx, principal: Principal, note_id: str, *, for_update: bool = False,
                 with_snapshot: bool = False) -> NoteRow:
    """The note's row, for a service acting on a note the caller names: not-found for a malformed
    or missing id, out-of-scope (before any lookup) for one outside the caller's note set."""
    _require_reachable(principal, note_id)
    row = tx.note(note_id, with_snapshot=with_snapshot, for_update=for_update)
    if row is None:
        raise _not_found(note_id)
    return row


def _require_reachable(principal: Principal, note_id: str) -> None:
    """Before any lookup: a malformed id names no note; one outside the note set is out-of-scope."""
    if not is_ulid(note_id):
        raise _not_found(note_id)
    principal.require_note(note_id)


def _block_row(block: Block, position: int, stamp: Provenance) -> BlockRow:
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
