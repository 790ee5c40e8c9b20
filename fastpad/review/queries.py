"""Reading turns: the list, one turn, its review (the per-block diff with its sources and,
when the note moved, the three-way merge of what still waits), the Agent activity queue,
the turns' audit log and the sources a retraction must reach."""

from __future__ import annotations

from collections.abc import Collection

from fastpad.errors import FieldError, NotFound, ValidationFailed
from fastpad.notes import NoteDocument
from fastpad.notes.ids import is_ulid
from fastpad.review.apply import blocks_at
from fastpad.review.core import ReviewCore, visible_turn
from fastpad.review.landing import plan_accept
from fastpad.review.turns import (
    REVERTED,
    STATUS_FILTERS,
    WAITING,
    ActivityItem,
    AuditEntry,
    Retraction,
    SourceBlock,
    Turn,
    TurnPage,
    TurnReview,
    diff_from_json,
)
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import WorkspaceTx
from fastpad.store.turns import SourceUse

MAX_PAGE = 200


class TurnQueries(ReviewCore):
    """What a principal may read of turns and of where proposals landed."""

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
            row = visible_turn(tx, principal, turn_id)
        return Turn.from_row(row, self.review_url(row.id))

    def review(self, principal: Principal, turn_id: str) -> TurnReview:
        """The per-block diff with its sources, and — when the note moved since the agent read
        it — the three-way merge of what still waits, conflicts included."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            row = visible_turn(tx, principal, turn_id)
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
                visible_turn(tx, principal, turn_id)
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


def _who(tx: WorkspaceTx, kind: str, principal_id: str, token_id: str | None) -> str:
    if kind == "agent":
        agent = tx.agent(principal_id)
        name = agent.name if agent else "an agent"
    else:
        person = tx.person(principal_id)
        name = (person.display_name or person.email) if person else "a person"
    token = tx.token(token_id) if token_id else None
    return f"{name} ({token.label or token.prefix})" if token and token.label != name else name
