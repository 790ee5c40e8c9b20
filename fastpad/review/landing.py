"""What accepting (some of) a stored proposal does to the note as it is now, and how a
landed turn is undone. Pure: block lists in, changes out; the service applies them.

Accept
------

``plan_accept`` takes the proposal's per-block diff (computed at its base), the
blocks being accepted now, the blocks an earlier accept already landed, and the
note at the base and now.

- The note is still at the base: the selected changes land as proposed.
- The note moved (a person edited it, or an earlier accept-some landed part of
  the turn): a three-way merge (:func:`fastpad.review.merge.three_way_merge`) of
  base, now and "the base with the selected changes". Blocks an earlier accept
  landed are part of that last side as they stand now, so a later insert still
  lands after an earlier one, and a landed block a person deleted is not brought
  back. Where the person and the proposal changed the same block differently the
  merge keeps the person's version and reports a conflict.

A conflict is never decided silently. ``resolutions`` maps a conflicting block id
to one of :data:`CHOICES`: ``mine`` (keep the person's version), ``proposal``
(take the proposal's, re-inserting a block the person deleted), or
``suggestion`` (the word-level merge of both, when the merge offers one). Until
every conflict has a resolution, the plan lists the open conflicts and the
caller lands nothing.

Revert
------

``plan_revert`` undoes every landing of a turn, newest first, each with
:func:`fastpad.review.merge.revert_plan` on the result of undoing the ones after
it, so a person's later edits survive and the turn goes as one unit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.blocks import Block
from fastpad.review.apply import BlockDiff, Change, apply_changes_to_blocks, changes_from_diffs
from fastpad.review.merge import MergeConflict, RevertOutcome, revert_plan, three_way_merge

MINE, PROPOSAL, SUGGESTION = "mine", "proposal", "suggestion"
CHOICES = (MINE, PROPOSAL, SUGGESTION)


@dataclass
class AcceptPlan:
    changes: list[Change]  # applied in order to the note as it is now
    landed: list[str]  # the selected blocks whose proposed change (or a merge of it) lands
    conflicts: list[MergeConflict]  # unresolved: nothing may land while any remain
    merged: bool  # the note had moved since the base: this came from a three-way merge
    all_conflicts: list[MergeConflict] = field(default_factory=list)  # resolved ones too, for the page


@dataclass
class RevertResult:
    changes: list[Change]
    outcomes: list[RevertOutcome]
    blocks: list[Block]


def plan_accept(
    diffs: Sequence[BlockDiff],
    selected: Collection[str],
    *,
    landed: Collection[str],
    base: Sequence[Block],
    now: Sequence[Block],
    at_base: bool,
    resolutions: Mapping[str, str] | None = None,
) -> AcceptPlan:
    resolutions = _checked(resolutions or {})
    chosen = [diff.block_id for diff in diffs if diff.block_id in selected]
    if at_base:
        return AcceptPlan(changes_from_diffs(diffs, only=chosen), chosen, [], merged=False)

    current = {block.id: block for block in now if block.id}
    earlier = {d.block_id for d in diffs if d.kind == "inserted" and d.block_id in landed and d.block_id in current}
    theirs_changes = [
        Change(c.kind, c.block_id, current[c.block_id], c.after_id) if c.block_id in earlier else c
        for c in changes_from_diffs(diffs, only=set(chosen) | earlier)
    ]
    theirs = apply_changes_to_blocks(base, theirs_changes)
    merge = three_way_merge(base, now, theirs)
    taken = set(merge.taken) & set(chosen)
    changes, blocks, open_conflicts = list(merge.changes), list(merge.blocks), []
    for conflict in merge.conflicts:
        choice = resolutions.get(conflict.block_id)
        if choice is None:
            open_conflicts.append(conflict)
            continue
        change = _resolve(conflict, choice, theirs, blocks)
        if change is not None:
            changes.append(change)
            blocks = apply_changes_to_blocks(blocks, [change])
            taken.add(conflict.block_id)
    return AcceptPlan(
        changes=changes if not open_conflicts else [],
        landed=[block_id for block_id in chosen if block_id in taken] if not open_conflicts else [],
        conflicts=open_conflicts,
        merged=True,
        all_conflicts=list(merge.conflicts),
    )


def plan_revert(landings: Sequence[tuple[Sequence[Block], Sequence[Block]]], now: Sequence[Block]) -> RevertResult:
    """``landings``: (blocks before, blocks after) of each landing, oldest first."""
    changes: list[Change] = []
    outcomes: list[RevertOutcome] = []
    blocks = list(now)
    for before, after in reversed(landings):
        plan = revert_plan(before, after, blocks)
        changes += plan.changes
        outcomes += plan.outcomes
        blocks = plan.blocks
    return RevertResult(changes, outcomes, blocks)


def _resolve(conflict: MergeConflict, choice: str, theirs: Sequence[Block], blocks: Sequence[Block]) -> Change | None:
    """The change one resolution makes to the merged blocks (None: keep the person's version)."""
    if choice == MINE:
        return None
    if choice == SUGGESTION:
        if conflict.suggestion is None:
            raise _bad(conflict.block_id, "no_suggestion", "There is no merged suggestion for this block; "
                       "choose mine or proposal.")
        return Change("replace", conflict.block_id, conflict.suggestion)
    proposed = conflict.theirs
    if proposed is None:
        return Change("delete", conflict.block_id)
    if conflict.ours is not None:
        return Change("replace", conflict.block_id, proposed)
    # The person deleted it; the proposal's version comes back, with its id, after the nearest
    # block before it (in the proposal's order) that is still there.
    present = {block.id for block in blocks}
    anchor = None
    for block in theirs:
        if block.id == conflict.block_id:
            break
        if block.id in present:
            anchor = block.id
    return Change("insert", conflict.block_id, proposed, anchor)


def _checked(resolutions: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(resolutions, Mapping):
        raise ValidationFailed(
            detail="resolutions maps a block id to mine, proposal or suggestion",
            field_errors=[FieldError("resolutions", "invalid_type", "an object of block id -> choice")],
        )
    for block_id, choice in resolutions.items():
        if choice not in CHOICES:
            raise _bad(block_id, "invalid_choice", f"A resolution is one of {', '.join(CHOICES)}.")
    return dict(resolutions)


def _bad(block_id: str, code: str, message: str) -> ValidationFailed:
    return ValidationFailed(detail=message, field_errors=[FieldError(f"resolutions.{block_id}", code, message)])
