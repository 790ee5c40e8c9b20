"""What every part of the review service shares: its dependencies, who may see a turn, and
landing a turn's selection on its note — the one path by which a proposal reaches a note,
whether a person or a granted token accepts it (:mod:`fastpad.review.decisions`) or
auto-apply lands it as it is proposed (:mod:`fastpad.review.proposals`).

Landing is one transaction: the prose through the one write path (``NoteService.apply_edit``,
merging three ways if the note moved, :mod:`fastpad.review.landing`) and the turn's edges,
calendar events and citation edges through the services that own them
(:mod:`fastpad.review.effects`), all or nothing, recorded in the turn's log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FastpadError, NotFound
from fastpad.knowledge.note_views import NoteEdit
from fastpad.knowledge.notes import NoteService
from fastpad.notes import NoteDocument, NoteMeta
from fastpad.notes.ids import is_ulid
from fastpad.notes.provenance import Origin, Provenance, ReviewState
from fastpad.review.apply import apply_changes, blocks_at
from fastpad.review.effects import KnowledgeEffects, Landed
from fastpad.review.landing import AcceptPlan, plan_accept
from fastpad.review.merge import MergeConflict
from fastpad.review.turns import conflict_as_dict, diff_from_json, status_after
from fastpad.security.audit import record_turn_event
from fastpad.security.principals import Principal
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.turns import TurnEventRow, TurnRow


class ReviewCore:
    """The review service's dependencies, its review links and the landing of a turn, which
    proposing, deciding and reading turns build on (:class:`fastpad.review.service.ReviewService`)."""

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
        record_turn_event(tx, turn_event(
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


def _op_refused(refused: FastpadError, index: int, kind: str) -> FastpadError:
    """An owning service's refusal of one op, as the accept's answer: the same error, naming
    the op, and saying that nothing of the accept was applied."""
    return replace(refused, detail=f"ops[{index}] ({kind}) could not be applied, so nothing was accepted: {refused}",
                   extra={**refused.extra, "op_index": index})


def visible_turn(tx: WorkspaceTx, principal: Principal, turn_id: str, *, for_update: bool = False,
                 any_author: bool = False) -> TurnRow:
    """The turn, if this principal may see it: a person sees turns on notes they can see, an
    agent only its own (``any_author``: let the grant check say why, instead of not-found)."""
    row = tx.turns.get(turn_id, for_update=for_update) if is_ulid(turn_id) else None
    own = row is not None and (row.author_kind, row.author_id) == (principal.kind, principal.principal_id)
    if row is None or not principal.can_see(row.note_id) or not (principal.is_person or own or any_author):
        raise NotFound(detail=f"no turn {turn_id}", extra={"turn_id": turn_id}, next_call="GET /v1/turns")
    return row


def turn_event(row: TurnRow, action: str, principal: Principal, at: datetime, **fields: Any) -> TurnEventRow:
    return TurnEventRow(
        turn_id=row.id, note_id=row.note_id, action=action, actor_kind=principal.kind,
        actor_id=principal.principal_id, token_id=principal.token_id, at=at,
        **{k: tuple(v) if k in ("block_ids", "op_indexes") else v for k, v in fields.items()},
    )
