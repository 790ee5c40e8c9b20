"""Proposing: an agent's sessions, its reads with anchor handles (what the copy guard
compares against), and its proposals — ops against a note, or a new note — validated, diffed
per block and stored as a turn once per idempotency key. Under auto-apply the turn lands at
once (:meth:`ReviewCore._land`), unreviewed for good."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FieldError, IdempotencyConflict, ValidationFailed
from fastpad.knowledge.edges import SUPERSEDES, check_edge_type
from fastpad.knowledge.note_core import visible_note
from fastpad.knowledge.note_views import NoteView
from fastpad.knowledge.trust import TrustFloor, filter_blocks
from fastpad.notes import Block, NoteDocument
from fastpad.notes.ids import new_id
from fastpad.notes.provenance import ReviewState
from fastpad.review.apply import BlockDiff, apply_prose, check_fresh
from fastpad.review.copy_guard import NewText, ReadText, could_share_shingles, guard_copy, new_texts_from_diffs
from fastpad.review.core import ReviewCore, turn_event
from fastpad.review.ops import (
    AddEdge,
    InsertBefore,
    MoveEvent,
    Op,
    needs_person,
    proposal_fingerprint,
    resolve_handles,
    validate_proposal,
)
from fastpad.review.turns import (
    AUTO_APPLY,
    PENDING,
    FetchedNote,
    HandledBlock,
    Turn,
    diff_from_json,
    diff_to_json,
    op_to_json,
)
from fastpad.security.agent_sessions import SESSION_TTL, SessionClaims, mint_session, open_session
from fastpad.security.audit import record_turn_event
from fastpad.security.handles import HANDLE_TTL, mint_handle, open_handle, require_current_frontier
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_PROPOSE, NOTES_READ, NOTES_WRITE
from fastpad.store import WorkspaceTx
from fastpad.store.turns import TurnRow

# The copy guard compares a proposal with what the credential read recently: reads older
# than a session's lifetime are dropped, and at most this many note reads are kept.
MAX_READS = 200


class Proposals(ReviewCore):
    """An agent's side of review: its sessions, reads and proposals."""

    # ------------------------------------------------------------------ sessions

    def open_session(self, principal: Principal) -> str:
        """A new agent session for this credential (``fastpad_capabilities``)."""
        return mint_session(self._secret, workspace_id=principal.workspace_id, credential=principal.key,
                            now=self.clock()).session_id

    def check_session(self, principal: Principal, session_id: object) -> SessionClaims:
        """The session's claims if this credential opened it and it has not expired; else a 422."""
        return open_session(self._secret, session_id, workspace_id=principal.workspace_id,
                            credential=principal.key, now=self.clock())

    # ------------------------------------------------------------------ reading with handles

    def fetch_with_handles(self, principal: Principal, session_id: str, note_id: str,
                           floor: TrustFloor | None = None) -> FetchedNote:
        """The note's blocks, each with an anchor handle bound to this session, token, note and
        version; the read is recorded for the copy guard. With ``floor``, only the blocks it
        admits are read (the MCP surface applies the call's floor on the way out instead)."""
        principal.require(NOTES_READ)
        self.check_session(principal, session_id)
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            row = visible_note(tx, principal, note_id)
            blocks = tx.blocks(note_id)
            if floor is not None:
                blocks = filter_blocks(blocks, floor)
            self._record(tx, principal, session_id, note_id, row.frontier, [(b.block_id, b.text) for b in blocks], now)
        handled = tuple(
            HandledBlock(b.block_id, b.type, b.text, b.attrs, b.origin, b.review_state, mint_handle(
                self._secret, session_id=session_id, token_id=principal.key, note_id=note_id, block_id=b.block_id,
                frontier=row.frontier, now=now,
            ))
            for b in blocks
        )
        return FetchedNote(note_id, row.title, tuple(row.types), dict(row.properties), row.frontier, handled,
                           now + HANDLE_TTL)

    def record_read(self, principal: Principal, session_id: str, note_id: str, frontier: str,
                    blocks: Sequence[tuple[str, str]]) -> None:
        """Remember that this session read ``blocks`` (id, text) of a note, for the copy guard.
        Every surface that hands note text to an agent should call this."""
        self.check_session(principal, session_id)
        with self.store.write(principal.workspace_id) as tx:
            self._record(tx, principal, session_id, note_id, frontier, blocks, self.clock())

    def _record(self, tx: WorkspaceTx, principal: Principal, session_id: str, note_id: str, frontier: str,
                blocks: Sequence[tuple[str, str]], now: datetime) -> None:
        tx.turns.record_read(principal.key, session_id, note_id, frontier, blocks, now)
        tx.turns.prune_reads(principal.key, older_than=now - SESSION_TTL, keep=MAX_READS)

    # ------------------------------------------------------------------ proposing

    def propose(
        self,
        principal: Principal,
        session_id: str,
        note_id: str,
        ops: Any,
        expected_frontier: str,
        idempotency_key: str,
        dry_run: bool = False,
        source_block_ids: Sequence[str] = (),
    ) -> Turn:
        """Validate, diff and store a proposal (see the module docstring). A replay of the same
        key and body returns the same turn; another body under that key is an
        ``idempotency-conflict``; ``dry_run`` validates and diffs and writes nothing."""
        principal.require(NOTES_PROPOSE)
        self.check_session(principal, session_id)
        body = {"note_id": note_id, "ops": ops, "expected_frontier": expected_frontier,
                "idempotency_key": idempotency_key, "dry_run": dry_run,
                "source_block_ids": None if source_block_ids is None else list(source_block_ids)}
        request = validate_proposal(body)
        fingerprint = proposal_fingerprint({k: v for k, v in body.items() if k not in ("idempotency_key", "dry_run")})
        return self._once(principal, request.idempotency_key, fingerprint, request.dry_run,
                          lambda: self._propose(principal, session_id, request, fingerprint))

    def propose_note(self, principal: Principal, session_id: str, note: Any, idempotency_key: str, *,
                     dry_run: bool = False) -> Turn:
        """Propose a new note (``fastpad_propose`` with ``new_note``): ``note`` holds its ``title``,
        ``markdown``, ``types`` and ``properties``, checked as a person's new note is. A replay of
        the same key and note returns the same turn; ``dry_run`` checks and diffs only."""
        principal.require(NOTES_PROPOSE)
        self.check_session(principal, session_id)
        fields = _new_note_fields(note)
        if not isinstance(idempotency_key, str) or not idempotency_key.strip():
            raise ValidationFailed(detail="idempotency_key is required",
                                   field_errors=[FieldError("idempotency_key", "required", "a non-empty string")])
        fingerprint = proposal_fingerprint({"new_note": fields})
        return self._once(principal, idempotency_key, fingerprint, dry_run, lambda: self._propose_note(
            principal, session_id, fields, idempotency_key=idempotency_key, fingerprint=fingerprint, dry_run=dry_run,
            field_prefix="new_note."))

    def create_note(self, principal: Principal, fields: dict[str, Any]) -> NoteView | Turn:
        """An agent's new note over any surface (``NoteService.create`` hands it here): a pending
        proposal of it, or — under auto-apply — the note itself, landed at once, unreviewed, and
        listed on Agent activity like any other auto-applied write. ``notes:write`` or
        ``notes:propose`` will do: an agent's write of prose is a proposal either way (spec:
        "An agent with notes:write cannot change a note directly")."""
        if not principal.has(NOTES_PROPOSE):
            principal.require(NOTES_WRITE)
        key = f"create:{new_id()}"  # the surface's own idempotency (an HTTP Idempotency-Key) wraps this call
        return self._propose_note(principal, self.open_session(principal), fields, idempotency_key=key,
                                  fingerprint=proposal_fingerprint({"create_note": key}), dry_run=False,
                                  landed_view=True)

    def _once(self, principal: Principal, key: str, fingerprint: str, dry_run: bool,
              store: Callable[[], Turn]) -> Turn:
        """``store`` a proposal once per idempotency key: a replay of the key with the same body
        answers the stored turn, another body under it is an ``idempotency-conflict``."""
        if not dry_run:
            replayed = self._replay(principal, key, fingerprint)
            if replayed is not None:
                return replayed
        try:
            return store()
        except self.store.integrity_errors:
            # The same key landed concurrently: answer as a replay of that one.
            replayed = self._replay(principal, key, fingerprint)
            if replayed is None:
                raise
            return replayed

    def _replay(self, principal: Principal, key: str, fingerprint: str) -> Turn | None:
        with self.store.read(principal.workspace_id) as tx:
            row = tx.turns.by_idempotency_key(principal.key, key)
        if row is None:
            return None
        if row.request_hash != fingerprint:
            raise IdempotencyConflict(
                detail=f"idempotency_key {key!r} was first used for a different proposal ({row.id}).",
                field_errors=[FieldError("idempotency_key", "idempotency_conflict", "used with another body")],
                extra={"idempotency_key": key, "turn_id": row.id},
                next_call="propose again under a new idempotency_key",
            )
        return Turn.from_row(row, self.review_url(row.id), replayed=True)

    def _propose(self, principal: Principal, session_id: str, request: Any, fingerprint: str) -> Turn:
        now = self.clock()
        note_id = request.note_id
        open_tx = self.store.read if request.dry_run else self.store.write
        with open_tx(principal.workspace_id) as tx:
            row = visible_note(tx, principal, note_id, for_update=not request.dry_run, with_snapshot=True)
            if row.trashed_at is not None:
                raise Conflict(detail="the note is in the trash; a person must restore it before it can change",
                               extra={"reason": "trashed"})
            assert row.snapshot is not None
            doc = NoteDocument.load(row.snapshot)
            opener = self._handle_opener(tx, principal, session_id, note_id, row.frontier, now)
            ops = resolve_handles(request.ops, opener)
            check_fresh(doc, request.expected_frontier)
            citations = self._citations(tx, principal, request, ops)
            self._check_person_ops(tx, principal, ops)
            result = apply_prose(doc, ops, at=request.expected_frontier, source_block_ids=request.source_block_ids)
            person_ops = [i for i, op in enumerate(ops) if needs_person(op)]
            if not result.diffs and not person_ops:
                raise ValidationFailed(
                    detail="the proposal changes nothing: every op leaves the note as it is",
                    field_errors=[FieldError("ops", "no_change", "nothing to propose")],
                )
            self._guard_copy(tx, principal, note_id,
                             new_texts_from_diffs(result.diffs, field_of=_text_fields(ops, result.inserted)),
                             [block.text for block in result.before], now)  # the note as it is: it is fresh
            turn = _new_turn(
                principal, session_id, note_id, now, idempotency_key=request.idempotency_key,
                request_hash=fingerprint, base_frontier=request.expected_frontier, proposal_update=result.update(),
                ops=[op_to_json(op) for op in ops], source_block_ids=list(request.source_block_ids),
                diffs=[diff_to_json(d) for d in result.diffs], pending_blocks=[d.block_id for d in result.diffs],
                pending_ops=person_ops,
            )
            if request.dry_run:
                return _dry_run(turn)
            tx.turns.insert(turn)
            tx.turns.insert_sources(turn.id, [
                (d.block_id, citations[source], source)
                for d in result.diffs if d.kind != "deleted" for source in d.source_block_ids
            ])
            record_turn_event(tx, turn_event(turn, "propose", principal, now, block_ids=turn.pending_blocks,
                                             op_indexes=person_ops))
            tx.feed.append("proposal", at=now, actor=principal.actor(), note_id=note_id, subject_id=turn.id)
            if principal.auto_apply and turn.pending_blocks:
                # Auto-apply skips review, never the record: the turn lands now, unreviewed for good.
                self._land(tx, principal, turn, turn.pending_blocks, review=ReviewState.UNREVIEWED,
                           authority=AUTO_APPLY, action="auto_apply")
            stored = tx.turns.get(turn.id)
        assert stored is not None
        return Turn.from_row(stored, self.review_url(stored.id))

    def _propose_note(self, principal: Principal, session_id: str, fields: dict[str, Any], *, idempotency_key: str,
                      fingerprint: str, dry_run: bool, field_prefix: str = "", landed_view: bool = False) -> Any:
        """Draft the new note under an id minted now and store the turn that proposes it: its
        blocks as insertions at the end, in order, into the note (which does not exist yet), and
        its title, types and properties as ``proposed_note``. Under auto-apply it lands at once;
        ``landed_view`` then returns the note instead of the turn. ``field_prefix`` is where the
        caller's fields sit in its request, for a copy refusal to name them."""
        now = self.clock()
        note_id = new_id()
        open_tx = self.store.read if dry_run else self.store.write
        with open_tx(principal.workspace_id) as tx:
            draft = self.notes.draft(tx, principal, note_id, **fields)
            created = draft.blocks or [Block(new_id(), "paragraph", "", {})]  # a title alone is a note too
            diffs = [BlockDiff("inserted", block.id, None, block, (), after_id)
                     for block, after_id in zip(created, [None, *(b.id for b in created)])]
            field_of = {block.id: f"{field_prefix}markdown" if "markdown" in fields else f"{field_prefix}blocks[{i}].text"
                        for i, block in enumerate(created)}
            self._guard_copy(tx, principal, note_id, [NewText(None, draft.meta.title, f"{field_prefix}title"),
                                                      *new_texts_from_diffs(diffs, field_of=field_of)], (), now)
            turn = _new_turn(
                principal, session_id, note_id, now, idempotency_key=idempotency_key, request_hash=fingerprint,
                base_frontier="",  # the empty note its first accept creates; set then
                proposal_update=b"",
                ops=[op_to_json(InsertBefore(None, b.text, b.type, b.attrs)) for b in created],
                source_block_ids=[], diffs=[diff_to_json(d) for d in diffs],
                pending_blocks=[b.id for b in created], pending_ops=[],
                proposed_note={"title": draft.meta.title, "types": list(draft.meta.types),
                               "properties": draft.meta.properties,
                               "reassigned_block_ids": draft.reassigned_block_ids},
            )
            if dry_run:
                return _dry_run(turn)
            tx.turns.insert(turn)
            record_turn_event(tx, turn_event(turn, "propose", principal, now, block_ids=turn.pending_blocks))
            tx.feed.append("proposal", at=now, actor=principal.actor(), note_id=note_id, subject_id=turn.id)
            if principal.auto_apply:
                self._land(tx, principal, turn, turn.pending_blocks, review=ReviewState.UNREVIEWED,
                           authority=AUTO_APPLY, action="auto_apply")
                if landed_view:
                    return replace(self.notes.view_in(tx, principal, note_id),
                                   reassigned_block_ids=draft.reassigned_block_ids)
            stored = tx.turns.get(turn.id)
        assert stored is not None
        return Turn.from_row(stored, self.review_url(stored.id))

    @staticmethod
    def _guard_copy(tx: WorkspaceTx, principal: Principal, note_id: str, changes: Sequence[NewText],
                    own: Sequence[str], now: datetime) -> None:
        """``cross-note-copy-denied`` if the new text (``changes``) reproduces what this credential
        read from another note lately; ``own`` is the note's own text, which it may repeat. Only
        texts that could share a shingle with it are handed to the rule (an exact prefilter: the
        rest cannot change its verdict)."""
        read = [ReadText(r.note_id, block_id, text)
                for r in tx.turns.reads(principal.key, since=now - SESSION_TTL, limit=MAX_READS)
                if r.note_id != note_id for block_id, text in r.blocks]
        read = [t for t, keep in zip(read, could_share_shingles(changes, [t.text for t in read])) if keep]
        own = [t for t, keep in zip(own, could_share_shingles(changes, own)) if keep]
        guard_copy(changes, read, note_id=note_id, own_texts=own)

    def _handle_opener(self, tx: WorkspaceTx, principal: Principal, session_id: str, note_id: str, frontier: str,
                       now: datetime) -> Callable[[str, str], str]:
        def open_one(handle: str, field: str) -> str:
            claims = open_handle(
                self._secret, handle, session_id=session_id, token_id=principal.key, note_id=note_id, now=now,
                is_token_revoked=lambda credential: _credential_dead(tx, credential, now), field=field,
            )
            require_current_frontier(claims, frontier, field=field)
            return claims.block_id

        return open_one

    @staticmethod
    def _citations(tx: WorkspaceTx, principal: Principal, request: Any, ops: Sequence[Op]) -> dict[str, str]:
        """source block id -> its note, for every block the proposal cites; a block that does not
        exist, or sits in a note this credential cannot see, is refused by name."""
        cited: list[tuple[str, str]] = [(f"source_block_ids[{i}]", b) for i, b in enumerate(request.source_block_ids)]
        for index, op in enumerate(ops):
            for j, block_id in enumerate(getattr(op, "source_block_ids", ())):
                cited.append((f"ops[{index}].source_block_ids[{j}]", block_id))
        notes = tx.turns.notes_of_blocks({block_id for _, block_id in cited})
        errors = [FieldError(path, "unknown_block", "no block with this id in a note this credential can read")
                  for path, block_id in cited if block_id not in notes or not principal.can_see(notes[block_id])]
        if errors:
            raise ValidationFailed(detail="some cited source blocks do not exist here", field_errors=errors[:50])
        return notes

    @staticmethod
    def _check_person_ops(tx: WorkspaceTx, principal: Principal, ops: Sequence[Op]) -> None:
        """Edges must be of a type the graph takes and point at notes (and blocks) this credential
        can see; a moved event must be a note it can see. Checked now, so what waits for a person
        is something a person can accept."""
        errors: list[FieldError] = []
        for index, op in enumerate(ops):
            if isinstance(op, AddEdge):
                try:
                    check_edge_type(op.type, field=f"ops[{index}].type")
                except ValidationFailed as refused:
                    errors += refused.field_errors
                if op.type == SUPERSEDES:
                    errors.append(FieldError(f"ops[{index}].type", "use_supersede",
                                             "superseding a note is a person's own act, not a proposal"))
                if outside := principal.note_outside_set(op.to_note_id, f"ops[{index}].to_note_id"):
                    errors.append(outside)
                elif tx.note(op.to_note_id) is None:
                    errors.append(FieldError(f"ops[{index}].to_note_id", "unknown_note", "no such note here"))
                elif op.to_block_id is not None and \
                        tx.turns.notes_of_blocks([op.to_block_id]).get(op.to_block_id) != op.to_note_id:
                    errors.append(FieldError(f"ops[{index}].to_block_id", "unknown_block",
                                             "no such block in that note"))
            elif isinstance(op, MoveEvent):
                if outside := principal.note_outside_set(op.event_id, f"ops[{index}].event_id"):
                    errors.append(outside)
                elif tx.note(op.event_id) is None:
                    errors.append(FieldError(f"ops[{index}].event_id", "unknown_event", "no such event here"))
        if errors:
            raise ValidationFailed(detail="some ops name things that are not here", field_errors=errors)


_NEW_NOTE_FIELDS = ("title", "markdown", "types", "properties")


def _new_note_fields(note: Any) -> dict[str, Any]:
    """A proposed new note's members, as an agent sends them (NoteService.draft checks each)."""
    if not isinstance(note, Mapping):
        raise ValidationFailed(detail="new_note is an object: title, markdown, types, properties",
                               field_errors=[FieldError("new_note", "type", "an object")])
    unknown = sorted(set(note) - set(_NEW_NOTE_FIELDS))
    if unknown:
        raise ValidationFailed(detail=f"new_note holds {', '.join(_NEW_NOTE_FIELDS)}",
                               field_errors=[FieldError(f"new_note.{k}", "unknown", "not a member") for k in unknown])
    return {k: note[k] for k in _NEW_NOTE_FIELDS if k in note}


def _text_fields(ops: Sequence[Op], inserted: Mapping[int, str]) -> dict[str, str]:
    """Which op's text each touched block carries, so a copy refusal names the field."""
    fields = {block_id: f"ops[{index}].text" for index, block_id in inserted.items()}
    for index, op in enumerate(ops):
        if op.kind == "replace_block" and op.block_id is not None:
            fields[op.block_id] = f"ops[{index}].text"
    return fields


def _credential_dead(tx: WorkspaceTx, credential: str, now: datetime) -> bool:
    """Whether the credential a handle was minted for has been revoked (or has expired)."""
    kind, _, ident = credential.partition(":")
    if kind != "token":
        return False
    token = tx.token(ident)
    return token is None or token.revoked_at is not None or token.expires_at <= now


def _new_turn(principal: Principal, session_id: str, note_id: str, now: datetime, **proposal: Any) -> TurnRow:
    """A turn ``principal`` opens on ``note_id`` now, nothing of it landed yet; ``proposal``
    holds what it asks for (ops, diffs, base frontier, what waits, its idempotency key)."""
    return TurnRow(
        id=new_id(), note_id=note_id, status=PENDING, author_kind=principal.kind, author_id=principal.principal_id,
        author_key=principal.key, token_id=principal.token_id, session_id=session_id,
        origin=principal.origin.value, landed_blocks=[], accepted_ops=[], authority=None, reviewed_at=None,
        reviewed_by=None, created_at=now, updated_at=now, **proposal,
    )


def _dry_run(row: TurnRow) -> Turn:
    return Turn(
        id=None, note_id=row.note_id, status=PENDING, author_kind=row.author_kind, author_id=row.author_id,
        token_id=row.token_id, expected_frontier=row.base_frontier, ops=tuple(row.ops),
        source_block_ids=tuple(row.source_block_ids), diffs=tuple(diff_from_json(d) for d in row.diffs),
        pending_block_ids=tuple(row.pending_blocks), pending_ops=tuple(row.pending_ops), landed_block_ids=(),
        accepted_ops=(), authority=None, reviewed_at=None, review_url=None, created_at=None, updated_at=None,
        dry_run=True, new_note=row.proposed_note,
    )
