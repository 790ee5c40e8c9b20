"""Deciding on a turn: accept (a person's, or a granted token's own turn), reject, abandon,
revert (everything the turn did, keeping what a person made of it since) and mark reviewed."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from fastpad.errors import ApprovalNotPermitted, Conflict, FieldError, PolicyDenied, ValidationFailed
from fastpad.knowledge.note_views import NoteEdit
from fastpad.notes import NoteDocument
from fastpad.notes.provenance import Origin, Provenance, ReviewState
from fastpad.review.apply import apply_changes, blocks_at
from fastpad.review.core import ReviewCore, turn_event, visible_turn
from fastpad.review.effects import Landed
from fastpad.review.landing import plan_revert
from fastpad.review.merge import RevertOutcome
from fastpad.review.turns import ABANDONED, GRANT, PARTIALLY_ACCEPTED, PENDING, REVERTED, Decision, Turn, status_after
from fastpad.security.audit import record_turn_event
from fastpad.security.principals import Principal
from fastpad.security.scopes import TURNS_ACCEPT
from fastpad.store import WorkspaceTx
from fastpad.store.turns import TurnEventRow, TurnRow


class Decisions(ReviewCore):
    """A decision on what a turn proposed, and undoing what it did."""

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
            record_turn_event(tx, turn_event(row, action, principal, now, block_ids=blocks, op_indexes=ops))
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
            row = visible_turn(tx, principal, turn_id, for_update=True)
            done = tx.turns.events(turn_id=turn_id, actions=("accept", "auto_apply", "mark_reviewed"))
            # An agent's creation of a note without blocks landed no block, but it made the note.
            made_a_note = any(Landed.from_json(e.effects).notes for e in done)
            if row.status == REVERTED or not (row.landed_blocks or row.accepted_ops or made_a_note):
                raise Conflict(detail="nothing of this turn landed, so there is nothing to revert",
                               extra={"reason": "nothing_landed", "status": row.status})
            landings = [e for e in done if e.action != "mark_reviewed" and e.frontier_before != e.frontier_after]
            outcomes, edit = self._revert_prose(tx, principal, row, landings) if landings else ([], None)
            undone = self.effects.undo(tx, principal, [Landed.from_json(e.effects) for e in done])
            record_turn_event(tx, turn_event(
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
            row = visible_turn(tx, principal, turn_id, for_update=True)
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
            record_turn_event(tx, turn_event(row, "mark_reviewed", principal, now, block_ids=sorted(promote),
                                             review_state=ReviewState.HUMAN_ACCEPTED.value, effects=cited.as_json()))
            tx.turns.update(turn_id, reviewed_at=now, reviewed_by=principal.principal_id, updated_at=now)
            if not promote:
                tx.feed.append("proposal_reviewed", at=now, actor=principal.actor(), note_id=row.note_id,
                               subject_id=turn_id)
            stored = tx.turns.get(turn_id)
        assert stored is not None
        return Turn.from_row(stored, self.review_url(turn_id))

    def _turn_for_decision(self, tx: WorkspaceTx, principal: Principal, turn_id: str, *, accepting: bool) -> TurnRow:
        row = visible_turn(tx, principal, turn_id, for_update=True, any_author=accepting)
        if row.status not in (PENDING, PARTIALLY_ACCEPTED) or not (row.pending_blocks or row.pending_ops):
            raise Conflict(detail=f"this turn has nothing waiting for a decision (it is {row.status})",
                           extra={"reason": "turn_closed", "status": row.status, "turn_id": row.id})
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
