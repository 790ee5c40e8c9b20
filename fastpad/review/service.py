"""ReviewService: agents propose, people decide.

Every agent change to prose is a *turn*: ops against one note, validated, diffed
per block and stored. Nothing reaches the note until it is accepted, and accepting
is a separate transaction: the prose through the one write path
(``NoteService.apply_edit``) and the turn's edges, calendar events and citation edges
through the services that own them (:mod:`fastpad.review.effects`), all or nothing.

Who may do what (spec: Agents):

- **propose** — ``notes:propose``, with a session from :meth:`open_session` and
  anchor handles from :meth:`fetch_with_handles`. A token with auto-apply has its
  prose applied at once, stamped ``unreviewed`` for good, and listed on Agent
  activity.
- **accept** — a signed-in person (a web session, or the operator): any turn on a
  note they can see, prose and edge/calendar ops; blocks become ``human_accepted``
  and cited sources become citations. Any *token* (an agent's or a person's CLI
  credential) needs ``turns:accept``, may accept only turns that same token
  opened, and only prose; its blocks become ``agent_accepted`` and the turn goes
  on Agent activity. Otherwise ``approve-not-permitted`` naming the review URL.
- **reject**, **revert**, **mark reviewed** — a signed-in person only; no token of
  any scope (``policy-denied``).
- **abandon** — the turn's own author.
- **read** (list, get, review) — a person sees every turn on notes they can see;
  an agent sees its own.

If the note moved while the turn waited, accept merges three ways
(:mod:`fastpad.review.landing`); a block both sides changed is a conflict that a
person resolves explicitly, and nothing lands until they do.

Every landing, decision and review goes to the turn's log (``turn_events``) with what it did outside the
prose (edges, events), which revert reads; accepts and reverts to the workspace audit log too (security/audit.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from fastpad.errors import (
    ApprovalNotPermitted,
    Conflict,
    FastpadError,
    FieldError,
    IdempotencyConflict,
    NotFound,
    PolicyDenied,
    ValidationFailed,
)
from fastpad.knowledge.edges import SUPERSEDES, check_edge_type
from fastpad.knowledge.notes import NoteEdit, NoteService, NoteView, visible_note
from fastpad.knowledge.trust import TrustFloor, filter_blocks
from fastpad.notes import Block, NoteDocument, NoteMeta
from fastpad.notes.ids import is_ulid, new_id
from fastpad.notes.provenance import Origin, Provenance, ReviewState
from fastpad.review.apply import BlockDiff, apply_changes, apply_prose, blocks_at, check_fresh
from fastpad.review.copy_guard import NewText, ReadText, could_share_shingles, guard_copy, new_texts_from_diffs
from fastpad.review.effects import KnowledgeEffects, Landed
from fastpad.review.landing import AcceptPlan, plan_accept, plan_revert
from fastpad.review.merge import MergeConflict, RevertOutcome
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
    ABANDONED,
    AUTO_APPLY,
    GRANT,
    PARTIALLY_ACCEPTED,
    PENDING,
    REVERTED,
    STATUS_FILTERS,
    WAITING,
    ActivityItem,
    AuditEntry,
    Decision,
    FetchedNote,
    HandledBlock,
    Retraction,
    SourceBlock,
    Turn,
    TurnPage,
    TurnReview,
    conflict_as_dict,
    diff_from_json,
    diff_to_json,
    op_to_json,
    status_after,
)
from fastpad.security.agent_sessions import SESSION_TTL, SessionClaims, mint_session, open_session
from fastpad.security.audit import record_turn_event
from fastpad.security.handles import HANDLE_TTL, mint_handle, open_handle, require_current_frontier
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_PROPOSE, NOTES_READ, NOTES_WRITE, TURNS_ACCEPT
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.turns import SourceUse, TurnEventRow, TurnRow

MAX_PAGE = 200
# The copy guard compares a proposal with what the credential read recently: reads older
# than a session's lifetime are dropped, and at most this many note reads are kept.
MAX_READS = 200


class ReviewService:
    def __init__(
        self,
        store: Store,
        secret: bytes,
        notes: NoteService,
        *,
        effects: KnowledgeEffects | None = None,
        clock: Callable[[], datetime] = utcnow,
        public_url: str = "",
    ) -> None:
        self.store = store
        self._secret = secret
        self.notes = notes
        self.effects = effects or KnowledgeEffects()
        self.clock = clock
        # The public base URL review links start with; the HTTP app that serves the pages sets it.
        self.public_url = public_url.rstrip("/")

    def review_url(self, turn_id: str) -> str:
        return f"{self.public_url}/review/{turn_id}"

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
            record_turn_event(tx, _event(turn, "propose", principal, now, block_ids=turn.pending_blocks,
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
            record_turn_event(tx, _event(turn, "propose", principal, now, block_ids=turn.pending_blocks))
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

    # ------------------------------------------------------------------ reading turns

    def list(
        self,
        principal: Principal,
        *,
        status: str | None = None,
        mine: bool = False,
        activity: bool = False,
        cursor: str | None = None,
        limit: int = 50,
    ) -> TurnPage:
        """Newest first. ``mine``: turns this principal opened; ``activity``: the Agent activity
        queue. An agent only ever sees its own turns."""
        principal.require(NOTES_READ)
        if status is not None and status not in STATUS_FILTERS:
            raise ValidationFailed(detail=f"status is one of {', '.join(STATUS_FILTERS)}",
                                   field_errors=[FieldError("status", "enum", ", ".join(STATUS_FILTERS))])
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_PAGE}")])
        if cursor is not None and not is_ulid(cursor):
            raise ValidationFailed(detail="cursor is not one this server returned",
                                   field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back")])
        own = mine or not principal.is_person
        with self.store.read(principal.workspace_id) as tx:
            rows = tx.turns.list(
                before_id=cursor, limit=limit + 1, statuses=None if status in (None, WAITING) else [status],
                waiting=status == WAITING,
                author=(principal.kind, principal.principal_id) if own else None,
                note_ids=principal.note_ids, activity=activity,
            )
            # A person's list says who proposed each turn (an agent's lists only its own).
            names = {(r.author_kind, r.author_id, r.token_id) for r in rows[:limit]} if principal.is_person else set()
            who = {key: _who(tx, *key) for key in names}
        items = [Turn.from_row(r, self.review_url(r.id), author_name=who.get((r.author_kind, r.author_id, r.token_id)))
                 for r in rows[:limit]]
        return TurnPage(items, items[-1].id if len(rows) > limit else None)

    def get(self, principal: Principal, turn_id: str) -> Turn:
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            row = _visible_turn(tx, principal, turn_id)
        return Turn.from_row(row, self.review_url(row.id))

    def review(self, principal: Principal, turn_id: str) -> TurnReview:
        """The per-block diff with its sources, and — when the note moved since the agent read
        it — the three-way merge of what still waits, conflicts included."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            row = _visible_turn(tx, principal, turn_id)
            note = tx.note(row.note_id, with_snapshot=True)
            diffs = [diff_from_json(d) for d in row.diffs]
            moved, merge = False, None
            if note is not None:  # a proposed note is not there until a first part of it is accepted
                assert note.snapshot is not None
                doc = NoteDocument.load(note.snapshot)
                moved = note.frontier != row.base_frontier
                if moved and row.pending_blocks:
                    merge = plan_accept(diffs, row.pending_blocks, landed=row.landed_blocks,
                                        base=blocks_at(doc, row.base_frontier), now=doc.blocks(), at_base=False)
            sources = self._source_blocks(tx, principal, {s for d in diffs for s in d.source_block_ids})
            who = _who(tx, row.author_kind, row.author_id, row.token_id)
        turn = Turn.from_row(row, self.review_url(row.id))
        title = note.title if note is not None else (row.proposed_note or {}).get("title", "")
        return TurnReview(turn, title, who, moved, merge, sources)

    @staticmethod
    def _source_blocks(tx: WorkspaceTx, principal: Principal, block_ids: Collection[str]) -> dict[str, SourceBlock]:
        notes = tx.turns.notes_of_blocks(block_ids)
        retracted = tx.turns.retracted(block_ids)
        out: dict[str, SourceBlock] = {}
        for block_id in sorted(set(block_ids)):
            note_id = notes.get(block_id)
            if note_id is None or not principal.can_see(note_id):
                out[block_id] = SourceBlock(block_id, None, None, None)
                continue
            note = tx.note(note_id)
            text = next((b.text for b in tx.blocks(note_id) if b.block_id == block_id), None)
            out[block_id] = SourceBlock(block_id, note_id, note.title if note else None, text,
                                        retracted.get(block_id))
        return out

    # ------------------------------------------------------------------ deciding

    def accept(
        self,
        principal: Principal,
        turn_id: str,
        *,
        block_ids: Collection[str] | None = None,
        op_indexes: Collection[int] | None = None,
        resolutions: Mapping[str, str] | None = None,
    ) -> Decision:
        """Accept the turn, or some of it (``block_ids``/``op_indexes``; the rest stay pending).
        ``resolutions`` decides merge conflicts (block id -> mine | proposal | suggestion).

        One transaction: the prose through the one write path, each selected edge or calendar
        op and the ``cites`` edges of the landed blocks through the services that own them
        (:mod:`fastpad.review.effects`), the turn's new state, one audit entry recording what
        the accept created (what revert undoes) and every change-feed row commit together. Any
        refusal — a merge conflict, an edge whose target went to the trash, an event that cannot
        take the window — raises its typed error (naming the op) and leaves everything, the
        turn included, exactly as it was; a retry starts from the same place."""
        principal.require_writer("Accepting a proposal")
        person = principal.is_signed_in_person  # a person's CLI token accepts like an agent (spec: fp accept)
        with self.store.write(principal.workspace_id) as tx:
            row = self._turn_for_decision(tx, principal, turn_id, accepting=True)
            if person:
                blocks, ops = _selection(row, block_ids, op_indexes)
            else:
                self._check_grant(principal, row, op_indexes)
                blocks, ops = _selection(row, row.pending_blocks if block_ids is None else block_ids, ())
            if not blocks and not ops:
                raise ValidationFailed(detail="nothing selected to accept",
                                       field_errors=[FieldError("block_ids", "min_items",
                                                                "select something still waiting")])
            landed, merged = self._land(
                tx, principal, row, blocks, ops, review=ReviewState.HUMAN_ACCEPTED if person else
                ReviewState.AGENT_ACCEPTED, authority=None if person else GRANT, action="accept",
                resolutions=resolutions, cite=person,
            )
            stored = tx.turns.get(turn_id)
            note = tx.note(row.note_id)
        assert stored is not None and note is not None
        return Decision(Turn.from_row(stored, self.review_url(turn_id)), note.frontier, tuple(landed), merged)

    def _check_grant(self, principal: Principal, row: TurnRow, op_indexes: Collection[int] | None) -> None:
        url = self.review_url(row.id)

        def refuse(detail: str, reason: str) -> ApprovalNotPermitted:
            return ApprovalNotPermitted(
                detail=f"{detail} Hand the review URL to a person: {url}",
                extra={"reason": reason, "review_url": url, "turn_id": row.id},
                next_call=f"hand {url} to a person to review",
            )

        if not principal.has(TURNS_ACCEPT):
            raise refuse("This credential lacks turns:accept, so it can only propose.", "missing_grant")
        if principal.token_id is None or row.token_id != principal.token_id:
            raise refuse("A token may accept only turns it opened itself.", "not_own_turn")
        if op_indexes or not row.pending_blocks:
            raise refuse("Proposed links and calendar events wait for a person on every path.", "person_only_ops")

    def reject(self, principal: Principal, turn_id: str, *, block_ids: Collection[str] | None = None,
               op_indexes: Collection[int] | None = None) -> Turn:
        """A person declines what still waits, or the named part of it (the rest stays pending);
        nothing declined ever reached the note."""
        principal.require_signed_in("Rejecting a proposal")
        return self._close(principal, turn_id, action="reject", withdrawn="rejected", block_ids=block_ids,
                           op_indexes=op_indexes)

    def abandon(self, principal: Principal, turn_id: str) -> Turn:
        """The turn's own author withdraws what still waits."""
        return self._close(principal, turn_id, action="abandon", withdrawn=ABANDONED)

    def _close(self, principal: Principal, turn_id: str, *, action: str, withdrawn: str,
               block_ids: Collection[str] | None = None, op_indexes: Collection[int] | None = None) -> Turn:
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            row = self._turn_for_decision(tx, principal, turn_id, accepting=False)
            if action == "abandon" and (row.author_kind, row.author_id) != (principal.kind, principal.principal_id):
                raise PolicyDenied(detail="only the turn's own author can abandon it; a person rejects it instead",
                                   extra={"reason": "not_own_turn"}, next_call=f"POST /v1/turns/{turn_id}/reject")
            blocks, ops = _selection(row, block_ids, op_indexes)
            if not blocks and not ops:
                raise ValidationFailed(detail=f"nothing selected to {action}",
                                       field_errors=[FieldError("block_ids", "min_items",
                                                                "select something still waiting")])
            record_turn_event(tx, _event(row, action, principal, now, block_ids=blocks, op_indexes=ops))
            closed = replace(row, pending_blocks=[b for b in row.pending_blocks if b not in blocks],
                             pending_ops=[i for i in row.pending_ops if i not in ops])
            tx.turns.update(turn_id, pending_blocks=closed.pending_blocks, pending_ops=closed.pending_ops,
                            updated_at=now, status=status_after(closed, withdrawn=withdrawn))
            tx.feed.append(f"proposal_{action}", at=now, actor=principal.actor(), note_id=row.note_id,
                           subject_id=turn_id)
            stored = tx.turns.get(turn_id)
        assert stored is not None
        return Turn.from_row(stored, self.review_url(turn_id))

    def revert(self, principal: Principal, turn_id: str) -> Decision:
        """Undo everything the turn did, as one unit and in one transaction, keeping what a
        person made of it since:

        - its prose: every landing is undone, newest first, by a three-way revert that keeps a
          person's later edits (``Decision.kept``) and gives restored blocks their provenance back;
        - its edges (``cites`` included), event notes and moved events: what each accept (and
          mark reviewed) recorded doing is taken back by :meth:`KnowledgeEffects.undo` — an edge
          that existed before the accept was never recorded and stays, one a person confirmed
          since stays, a created event goes to the trash, a moved event gets its window back
          unless it was moved again since.

        The decision (``Decision.undone``) and the revert's audit entry list what became of
        each of them."""
        principal.require_signed_in("Reverting")
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            row = _visible_turn(tx, principal, turn_id, for_update=True)
            done = tx.turns.events(turn_id=turn_id, actions=("accept", "auto_apply", "mark_reviewed"))
            # An agent's creation of a note without blocks landed no block, but it made the note.
            made_a_note = any(Landed.from_json(e.effects).notes for e in done)
            if row.status == REVERTED or not (row.landed_blocks or row.accepted_ops or made_a_note):
                raise Conflict(detail="nothing of this turn landed, so there is nothing to revert",
                               extra={"reason": "nothing_landed", "status": row.status})
            landings = [e for e in done if e.action != "mark_reviewed" and e.frontier_before != e.frontier_after]
            outcomes, edit = self._revert_prose(tx, principal, row, landings) if landings else ([], None)
            undone = self.effects.undo(tx, principal, [Landed.from_json(e.effects) for e in done])
            record_turn_event(tx, _event(
                row, "revert", principal, now, block_ids=[o.block_id for o in outcomes],
                frontier_before=edit.frontier_before if edit else None,
                frontier_after=edit.frontier_after if edit else None,
                effects={"undone": undone} if undone else None,
            ))
            tx.turns.update(turn_id, status=REVERTED, pending_blocks=[], pending_ops=[], updated_at=now)
            if edit is None or edit.frontier_before == edit.frontier_after:  # the note itself did not change
                tx.feed.append("proposal_revert", at=now, actor=principal.actor(), note_id=row.note_id,
                               subject_id=turn_id)
            stored = tx.turns.get(turn_id)
            note = tx.note(row.note_id)
        assert stored is not None and note is not None
        kept = tuple((o.block_id, o.outcome) for o in outcomes if o.outcome.startswith("kept_"))
        return Decision(Turn.from_row(stored, self.review_url(turn_id)), note.frontier,
                        tuple(o.block_id for o in outcomes if not o.outcome.startswith("kept_")), kept=kept,
                        undone=tuple((kind, thing_id, outcome) for kind, thing_id, outcome in undone))

    def _revert_prose(self, tx: WorkspaceTx, principal: Principal, row: TurnRow,
                      landings: Sequence[TurnEventRow]) -> tuple[list[RevertOutcome], NoteEdit]:
        """Undo the landings (oldest first) on the note through the one write path."""
        restored: dict[str, Provenance] = {}
        for event in reversed(landings):  # the earliest landing knows what a block was before the turn
            restored.update({b: Provenance(Origin(p[0]), ReviewState(p[1]))
                             for b, p in (event.provenance_before or {}).items()})
        outcome: dict[str, Any] = {}

        def undo(doc: NoteDocument) -> dict[str, Provenance]:
            versions = [(blocks_at(doc, str(e.frontier_before)), blocks_at(doc, str(e.frontier_after)))
                        for e in landings]
            result = plan_revert(versions, doc.blocks())
            apply_changes(doc, result.changes)
            outcome["outcomes"] = result.outcomes
            back = {o.block_id for o in result.outcomes if o.outcome in ("restored", "reinserted")}
            return {b: p for b, p in restored.items() if b in back}

        edit = self.notes.apply_edit(tx, principal, row.note_id, undo, stamp=Provenance.for_write(principal.origin),
                                     kind="revert")
        return outcome["outcomes"], edit

    def mark_reviewed(self, principal: Principal, turn_id: str) -> Turn:
        """A person has looked at a turn that landed on an agent's authority: the blocks its
        agent accepted become ``human_accepted`` and their citations ``cites`` edges (recorded,
        so a revert removes them too), in one transaction; auto-applied blocks stay
        ``unreviewed``. Either way the turn leaves the Agent activity queue."""
        principal.require_signed_in("Marking a turn reviewed")
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            row = _visible_turn(tx, principal, turn_id, for_update=True)
            if row.authority is None or row.reviewed_at is not None or row.status == REVERTED:
                raise Conflict(detail="this turn is not waiting on the Agent activity page",
                               extra={"reason": "not_in_activity_queue", "status": row.status})
            landed = set(row.landed_blocks)
            promote = {
                b.block_id: Provenance(Origin(b.origin), ReviewState.HUMAN_ACCEPTED)
                for b in tx.blocks(row.note_id)
                if b.block_id in landed and b.review_state == ReviewState.AGENT_ACCEPTED.value
            }
            # Its title and properties its agent accepted are reviewed with its blocks.
            stored = tx.name_provenance([row.note_id]).get(row.note_id)
            names = stored and stored.moved((Origin.AGENT_WRITTEN.value, ReviewState.AGENT_ACCEPTED.value),
                                            (Origin.AGENT_WRITTEN.value, ReviewState.HUMAN_ACCEPTED.value))
            if promote or names:
                self.notes.apply_edit(tx, principal, row.note_id, lambda doc: promote, kind="review", names=names)
            cited = Landed()
            self.effects.cite(tx, principal, row, [c for c in tx.turns.sources_of(turn_id) if c[0] in promote], cited)
            record_turn_event(tx, _event(row, "mark_reviewed", principal, now, block_ids=sorted(promote),
                                         review_state=ReviewState.HUMAN_ACCEPTED.value, effects=cited.as_json()))
            tx.turns.update(turn_id, reviewed_at=now, reviewed_by=principal.principal_id, updated_at=now)
            if not promote:
                tx.feed.append("proposal_reviewed", at=now, actor=principal.actor(), note_id=row.note_id,
                               subject_id=turn_id)
            stored = tx.turns.get(turn_id)
        assert stored is not None
        return Turn.from_row(stored, self.review_url(turn_id))

    # ------------------------------------------------------------------ landing

    def _land(
        self,
        tx: WorkspaceTx,
        principal: Principal,
        row: TurnRow,
        blocks: Sequence[str],
        ops: Sequence[int] = (),
        *,
        review: ReviewState,
        authority: str | None,
        action: str,
        resolutions: Mapping[str, str] | None = None,
        cite: bool = False,
    ) -> tuple[list[str], bool]:
        """Land the selected blocks through the one write path (merging if the note moved), then
        apply the selected edge/calendar ops and (``cite``) the landed blocks' citations through
        their services, all in ``tx``; record it on the turn and in one audit entry. Returns the
        blocks that landed and whether a merge was needed."""
        now = self.clock()
        landed: list[str] = []
        merged = False
        edit: NoteEdit | None = None
        effects = Landed()
        if row.proposed_note is not None and tx.note(row.note_id) is None:
            row = self._create_proposed_note(tx, principal, row, effects, Provenance(Origin(row.origin), review))
        if blocks:
            diffs = [diff_from_json(d) for d in row.diffs]
            planned: dict[str, AcceptPlan] = {}

            def land(doc: NoteDocument) -> None:
                plan = plan_accept(diffs, blocks, landed=row.landed_blocks, base=blocks_at(doc, row.base_frontier),
                                   now=doc.blocks(), at_base=doc.frontier() == row.base_frontier,
                                   resolutions=resolutions)
                if plan.conflicts:
                    raise self._merge_conflict(row, plan.conflicts)
                apply_changes(doc, plan.changes)
                planned["plan"] = plan

            edit = self.notes.apply_edit(tx, principal, row.note_id, land,
                                         stamp=Provenance(Origin(row.origin), review), kind=action)
            landed, merged = planned["plan"].landed, planned["plan"].merged
        if cite and landed:
            self.effects.cite(tx, principal, row, [c for c in tx.turns.sources_of(row.id) if c[0] in landed], effects)
        for index in ops:
            try:
                self.effects.apply_op(tx, principal, row, index, effects)
            except FastpadError as refused:
                raise _op_refused(refused, index, row.ops[index]["op"]) from refused
        before = {b.block_id: [b.origin, b.review_state] for b in edit.before} if edit else {}
        record_turn_event(tx, _event(
            row, action, principal, now, review_state=review.value, block_ids=landed, op_indexes=ops,
            frontier_before=edit.frontier_before if edit else None,
            frontier_after=edit.frontier_after if edit else None,
            provenance_before={b: before[b] for b in landed if b in before}, effects=effects.as_json(),
        ))
        tx.turns.mark_sources_landed(row.id, landed, now)
        decided = replace(row, pending_blocks=[b for b in row.pending_blocks if b not in blocks],
                          landed_blocks=[*row.landed_blocks, *landed],
                          pending_ops=[i for i in row.pending_ops if i not in ops],
                          accepted_ops=[*row.accepted_ops, *ops])
        tx.turns.update(
            row.id, pending_blocks=decided.pending_blocks, landed_blocks=decided.landed_blocks,
            pending_ops=decided.pending_ops, accepted_ops=decided.accepted_ops, status=status_after(decided),
            authority=row.authority or (authority if landed else None), updated_at=now,
        )
        if edit is None or edit.frontier_before == edit.frontier_after:  # nothing reached the note: say so
            tx.feed.append(f"proposal_{action}", at=now, actor=principal.actor(), note_id=row.note_id,
                           subject_id=row.id)
        return landed, merged

    def _create_proposed_note(self, tx: WorkspaceTx, principal: Principal, row: TurnRow, effects: Landed,
                              stamp: Provenance) -> TurnRow:
        """The first landing of a proposed note creates it, empty, under the turn's note id; the
        landing then inserts its blocks as into any note, and reverting the turn takes back the
        creation too (``effects``: the note goes to the trash)."""
        proposed = row.proposed_note or {}
        meta = NoteMeta(proposed.get("title", ""), tuple(proposed.get("types", ())), proposed.get("properties", {}))
        self.notes.create_proposed(tx, principal, row.note_id, meta, stamp)
        created = tx.note(row.note_id)
        assert created is not None
        tx.turns.update(row.id, base_frontier=created.frontier)
        effects.notes.append(row.note_id)
        return replace(row, base_frontier=created.frontier)

    def _merge_conflict(self, row: TurnRow, conflicts: Sequence[MergeConflict]) -> Conflict:
        url = self.review_url(row.id)
        return Conflict(
            detail=f"The note changed while this proposal waited, and {len(conflicts)} block(s) were changed both "
            "by a person and by the proposal. Nothing was applied: the person's version is kept until someone "
            f"chooses, block by block, on the review page ({url}) or with resolutions.",
            extra={
                "reason": "merge_conflict", "review_url": url, "turn_id": row.id,
                "conflicts": [conflict_as_dict(c) for c in conflicts],
            },
            next_call=f"open {url} and resolve each conflict (mine, proposal or suggestion)",
        )

    def _turn_for_decision(self, tx: WorkspaceTx, principal: Principal, turn_id: str, *, accepting: bool) -> TurnRow:
        row = _visible_turn(tx, principal, turn_id, for_update=True, any_author=accepting)
        if row.status not in (PENDING, PARTIALLY_ACCEPTED) or not (row.pending_blocks or row.pending_ops):
            raise Conflict(detail=f"this turn has nothing waiting for a decision (it is {row.status})",
                           extra={"reason": "turn_closed", "status": row.status, "turn_id": row.id})
        return row

    # ------------------------------------------------------------------ agent activity, audit, sources

    def activity(self, principal: Principal, *, limit: int = 100) -> list[ActivityItem]:
        """Every turn that reached a note on an agent's authority and is not yet marked reviewed
        (or reverted), newest first, with who, which note and how many blocks."""
        principal.require_signed_in("The Agent activity page", reads_only=True)
        with self.store.read(principal.workspace_id) as tx:
            rows = tx.turns.list(limit=limit, activity=True, note_ids=principal.note_ids)
            items = []
            for row in rows:
                note = tx.note(row.note_id)
                landings = tx.turns.events(turn_id=row.id, actions=("accept", "auto_apply"))
                items.append(ActivityItem(
                    Turn.from_row(row, self.review_url(row.id)), _who(tx, row.author_kind, row.author_id, row.token_id),
                    note.title if note else "", len(row.landed_blocks), landings[-1].at if landings else row.updated_at,
                ))
        return items

    def audit_log(self, principal: Principal, *, turn_id: str | None = None, limit: int = 1000) -> list[AuditEntry]:
        """The append-only record of what happened to turns (a person's view)."""
        principal.require_signed_in("The audit log", reads_only=True)
        with self.store.read(principal.workspace_id) as tx:
            if turn_id is not None:
                _visible_turn(tx, principal, turn_id)
            rows = tx.turns.events(turn_id=turn_id, limit=limit)
        return [AuditEntry.from_row(r) for r in rows if principal.can_see(r.note_id)]

    def retract_source(self, principal: Principal, block_id: str, *, reason: str = "") -> Retraction:
        """A person marks a source block retracted (found to be wrong); the answer lists every
        block that was accepted citing it, wherever it landed, so each can be re-checked."""
        principal.require_signed_in("Retracting a source")
        if not isinstance(reason, str) or len(reason) > 2000:
            raise ValidationFailed(detail="reason is text of at most 2,000 characters",
                                   field_errors=[FieldError("reason", "max_length", "at most 2000 characters")])
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            note_id = tx.turns.notes_of_blocks([block_id]).get(block_id) if is_ulid(block_id) else None
            if note_id is None or not principal.can_see(note_id):
                raise NotFound(detail=f"no block {block_id}", extra={"block_id": block_id})
            tx.turns.retract(block_id, note_id, reason, principal.principal_id, now)
            tx.feed.append("source_retract", at=now, actor=principal.actor(), note_id=note_id, subject_id=block_id)
            uses = tx.turns.landed_from(block_id)
        return Retraction(block_id, note_id,
                          [u for u in uses if principal.can_see(u.note_id) and u.turn_status != REVERTED])

    def accepted_from(self, principal: Principal, source_block_id: str) -> list[SourceUse]:
        """Every block that landed citing ``source_block_id`` — what a retraction must reach."""
        principal.require(NOTES_READ)
        if not is_ulid(source_block_id):
            raise ValidationFailed(detail="a block id is a ULID",
                                   field_errors=[FieldError("block_id", "ulid", "must be a ULID")])
        with self.store.read(principal.workspace_id) as tx:
            uses = tx.turns.landed_from(source_block_id)
        return [u for u in uses if principal.can_see(u.note_id) and u.turn_status != REVERTED]


# ---------------------------------------------------------------------- helpers


def _op_refused(refused: FastpadError, index: int, kind: str) -> FastpadError:
    """An owning service's refusal of one op, as the accept's answer: the same error, naming
    the op, and saying that nothing of the accept was applied."""
    return replace(refused, detail=f"ops[{index}] ({kind}) could not be applied, so nothing was accepted: {refused}",
                   extra={**refused.extra, "op_index": index})


def _visible_turn(tx: WorkspaceTx, principal: Principal, turn_id: str, *, for_update: bool = False,
                  any_author: bool = False) -> TurnRow:
    """The turn, if this principal may see it: a person sees turns on notes they can see, an
    agent only its own (``any_author``: let the grant check say why, instead of not-found)."""
    row = tx.turns.get(turn_id, for_update=for_update) if is_ulid(turn_id) else None
    own = row is not None and (row.author_kind, row.author_id) == (principal.kind, principal.principal_id)
    if row is None or not principal.can_see(row.note_id) or not (principal.is_person or own or any_author):
        raise NotFound(detail=f"no turn {turn_id}", extra={"turn_id": turn_id}, next_call="GET /v1/turns")
    return row


def _selection(row: TurnRow, block_ids: Collection[str] | None,
               op_indexes: Collection[int] | None) -> tuple[list[str], list[int]]:
    """What a decision covers: everything still pending, or the named part of it."""
    if block_ids is None and op_indexes is None:
        return list(row.pending_blocks), list(row.pending_ops)
    errors = [FieldError("block_ids", "not_pending", f"{b} is not a block of this turn that is still waiting")
              for b in block_ids or () if b not in row.pending_blocks]
    errors += [FieldError("op_indexes", "not_pending", f"op {i} is not an edge or calendar op still waiting")
               for i in op_indexes or () if i not in row.pending_ops]
    if errors:
        raise ValidationFailed(detail="some of the selection is not waiting in this turn", field_errors=errors[:50])
    chosen = set(block_ids or ())
    return [b for b in row.pending_blocks if b in chosen], sorted(set(op_indexes or ()))


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


def _who(tx: WorkspaceTx, kind: str, principal_id: str, token_id: str | None) -> str:
    if kind == "agent":
        agent = tx.agent(principal_id)
        name = agent.name if agent else "an agent"
    else:
        person = tx.person(principal_id)
        name = (person.display_name or person.email) if person else "a person"
    token = tx.token(token_id) if token_id else None
    return f"{name} ({token.label or token.prefix})" if token and token.label != name else name


def _new_turn(principal: Principal, session_id: str, note_id: str, now: datetime, **proposal: Any) -> TurnRow:
    """A turn ``principal`` opens on ``note_id`` now, nothing of it landed yet; ``proposal``
    holds what it asks for (ops, diffs, base frontier, what waits, its idempotency key)."""
    return TurnRow(
        id=new_id(), note_id=note_id, status=PENDING, author_kind=principal.kind, author_id=principal.principal_id,
        author_key=principal.key, token_id=principal.token_id, session_id=session_id,
        origin=principal.origin.value, landed_blocks=[], accepted_ops=[], authority=None, reviewed_at=None,
        reviewed_by=None, created_at=now, updated_at=now, **proposal,
    )


def _event(row: TurnRow, action: str, principal: Principal, at: datetime, **fields: Any) -> TurnEventRow:
    return TurnEventRow(
        turn_id=row.id, note_id=row.note_id, action=action, actor_kind=principal.kind,
        actor_id=principal.principal_id, token_id=principal.token_id, at=at,
        **{k: tuple(v) if k in ("block_ids", "op_indexes") else v for k, v in fields.items()},
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

