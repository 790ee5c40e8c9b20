"""Block-level three-way merge (accept after a person's edit) and whole-turn revert.

Merge: accept when the note moved
---------------------------------

``base`` is the note at the proposal's ``expected_frontier`` (what the agent
read), ``ours`` the note now (a person edited it while the proposal waited),
``theirs`` the proposal's result. Blocks are matched by id; content is type, text
and attrs. Per block:

=====================  =====================  ========================================
ours vs base           theirs vs base         result
=====================  =====================  ========================================
unchanged              unchanged              base
changed / deleted      unchanged              ours
unchanged              changed / deleted      theirs (the proposal's change is taken)
changed                changed, identically   either (they agree)
changed                changed differently    **conflict** — ours kept
deleted                changed                **conflict** — stays deleted (ours)
changed                deleted                **conflict** — ours kept
absent (new in ours)   —                      ours (a person's new block)
—                      absent (new in theirs) inserted after its nearest preceding block
                                              that is still there (the start if none)
=====================  =====================  ========================================

A conflict carries all three versions, so what the proposal wanted is never
lost, and the merged blocks keep the person's version wherever there is one: the
person's text is never discarded silently. When both sides changed one block in
non-overlapping places, the conflict also offers a ``suggestion`` (a word-level
three-way merge of the two); it is offered to the person, never applied.

Revert: undo a whole applied turn
---------------------------------

:func:`revert_plan` takes the blocks before the turn was applied, right after it,
and now, and undoes the turn as one unit while keeping whatever a person did on
top. For each block the turn touched:

- **inserted by the turn** — untouched since → deleted; edited since → kept
  (it is the person's now); already deleted → nothing to do.
- **replaced by the turn** — untouched since → back to its text before the turn;
  edited since → the turn's own words are reverted around the person's edit when
  the two do not overlap (a word-level three-way merge), otherwise kept as the
  person left it; deleted since → stays deleted.
- **deleted by the turn** — re-inserted with its old id (so links to it work
  again) after the nearest preceding block that is still there.

Every block gets an outcome with a reason, so the page can say what was kept and why.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from fastpad.notes.blocks import Block
from fastpad.review.apply import (
    _TOKENS,
    Change,
    apply_changes_to_blocks,
    diff_for_review,
    same_content,
)

ConflictKind = Literal["both_changed", "deleted_by_person", "deleted_by_proposal"]


@dataclass(frozen=True)
class MergeConflict:
    block_id: str
    kind: ConflictKind
    base: Block | None
    ours: Block | None  # the person's version — what the merged result keeps
    theirs: Block | None  # what the proposal wanted
    suggestion: Block | None = None  # a clean word-level merge of both, when there is one

    @property
    def texts(self) -> tuple[str | None, str | None, str | None]:
        return tuple(block.text if block is not None else None for block in (self.base, self.ours, self.theirs))  # type: ignore[return-value]


@dataclass
class MergeResult:
    blocks: list[Block]  # the merged note
    changes: list[Change]  # applied to ``ours`` (the live note), these give ``blocks``
    conflicts: list[MergeConflict]
    taken: list[str] = field(default_factory=list)  # blocks where the proposal's change landed

    @property
    def clean(self) -> bool:
        return not self.conflicts


def three_way_merge(base: Sequence[Block], ours: Sequence[Block], theirs: Sequence[Block]) -> MergeResult:
    base_by = {block.id: block for block in base if block.id}
    ours_by = {block.id: block for block in ours if block.id}
    theirs_by = {block.id: block for block in theirs if block.id}
    changes: list[Change] = []
    conflicts: list[MergeConflict] = []
    taken: list[str] = []

    # Blocks that existed at the base: changed in place or deleted.
    for block_id, was in base_by.items():
        mine, proposed = ours_by.get(block_id), theirs_by.get(block_id)
        ours_changed, theirs_changed = not same_content(was, mine), not same_content(was, proposed)
        if not theirs_changed or same_content(mine, proposed):
            continue  # nothing proposed here, or both sides agree: ours already is the result
        if not ours_changed:
            taken.append(block_id)
            changes.append(Change("replace", block_id, proposed) if proposed is not None else Change("delete", block_id))
            continue
        kind: ConflictKind = (
            "deleted_by_person" if mine is None else "deleted_by_proposal" if proposed is None else "both_changed"
        )
        suggestion = merge_block(was, mine, proposed) if kind == "both_changed" else None
        conflicts.append(MergeConflict(block_id, kind, was, mine, proposed, suggestion))

    # Blocks the proposal inserted, in its order, each after its nearest surviving predecessor.
    present = {block.id for block in ours if block.id} - {c.block_id for c in changes if c.kind == "delete"}
    previous: list[str] = []
    for block in theirs:
        if not block.id:
            continue
        if block.id not in base_by and block.id not in ours_by:
            anchor = next((candidate for candidate in reversed(previous) if candidate in present), None)
            changes.append(Change("insert", block.id, block, anchor))
            present.add(block.id)
            taken.append(block.id)
        previous.append(block.id)

    # Order is safe as is: no insert's anchor is a block these changes delete.
    merged = apply_changes_to_blocks(ours, changes)
    return MergeResult(merged, changes, conflicts, taken)


def merge_block(base: Block, ours: Block, theirs: Block) -> Block | None:
    """A word-level three-way merge of one block, or ``None`` when the edits overlap."""
    text = merge_text(base.text, ours.text, theirs.text)
    if text is None:
        return None
    shape_base, shape_ours, shape_theirs = ((b.type, b.attrs) for b in (base, ours, theirs))
    if shape_ours == shape_theirs or shape_theirs == shape_base:
        block_type, attrs = shape_ours
    elif shape_ours == shape_base:
        block_type, attrs = shape_theirs
    else:
        return None
    return Block(ours.id, block_type, text, attrs)


def merge_text(base: str, ours: str, theirs: str) -> str | None:
    """diff3 over word tokens (whitespace and punctuation are tokens). Edits that overlap or
    touch are a conflict (``None``); identical edits count once."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    b, o, t = _TOKENS.findall(base), _TOKENS.findall(ours), _TOKENS.findall(theirs)
    edits = sorted(
        {*_edits(b, o), *_edits(b, t)},
        key=lambda edit: (edit[0], edit[1]),
    )
    for first, second in zip(edits, edits[1:]):
        # closed intervals: touching edits (or two inserts at one point) conflict
        if second[0] <= first[1]:
            return None
    out: list[str] = []
    cursor = 0
    for start, end, replacement in edits:
        out.extend(b[cursor:start])
        out.extend(replacement)
        cursor = end
    out.extend(b[cursor:])
    return "".join(out)


def _edits(base: list[str], other: list[str]) -> list[tuple[int, int, tuple[str, ...]]]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, tuple(other[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


# -- revert ------------------------------------------------------------------------------------------

RevertOutcomeKind = Literal[
    "deleted",  # inserted by the turn, untouched since: removed
    "restored",  # replaced by the turn, untouched since: back to its text before the turn
    "restored_around_edit",  # replaced by the turn, edited since: the turn's words undone, the person's kept
    "reinserted",  # deleted by the turn: back, with its old id
    "kept_edited",  # touched by the turn, then edited by a person in an overlapping way: left as is
    "kept_deleted",  # touched by the turn, then deleted by a person: stays deleted
    "kept_present",  # deleted by the turn, yet present again: left as is
]


@dataclass(frozen=True)
class RevertOutcome:
    block_id: str
    outcome: RevertOutcomeKind
    turn_made: str  # "inserted", "replaced" or "deleted"


@dataclass
class RevertPlan:
    changes: list[Change]  # applied to the note as it is now, these undo the turn
    outcomes: list[RevertOutcome]
    blocks: list[Block]  # the note after the revert

    @property
    def kept(self) -> list[RevertOutcome]:
        return [o for o in self.outcomes if o.outcome.startswith("kept_")]


def revert_plan(base_of_turn: Sequence[Block], after_turn: Sequence[Block], now: Sequence[Block]) -> RevertPlan:
    """Undo the turn that took ``base_of_turn`` to ``after_turn``, on the note as it is ``now``."""
    now_by = {block.id: block for block in now if block.id}
    changes: list[Change] = []
    outcomes: list[RevertOutcome] = []
    deleting: set[str] = set()
    reinsert: list[Block] = []

    for diff in diff_for_review(base_of_turn, after_turn):
        block_id, current = diff.block_id, now_by.get(diff.block_id)
        if diff.kind == "inserted":
            if current is None:
                outcomes.append(RevertOutcome(block_id, "kept_deleted", "inserted"))
            elif same_content(current, diff.after):
                changes.append(Change("delete", block_id))
                deleting.add(block_id)
                outcomes.append(RevertOutcome(block_id, "deleted", "inserted"))
            else:
                outcomes.append(RevertOutcome(block_id, "kept_edited", "inserted"))
        elif diff.kind == "replaced":
            assert diff.before is not None and diff.after is not None
            if current is None:
                outcomes.append(RevertOutcome(block_id, "kept_deleted", "replaced"))
            elif same_content(current, diff.after):
                changes.append(Change("replace", block_id, diff.before))
                outcomes.append(RevertOutcome(block_id, "restored", "replaced"))
            else:
                # base = what the turn left, ours = the person's edit on top, theirs = before the turn
                merged = merge_block(diff.after, current, diff.before)
                if merged is not None and not same_content(merged, current):
                    changes.append(Change("replace", block_id, merged))
                    outcomes.append(RevertOutcome(block_id, "restored_around_edit", "replaced"))
                else:
                    outcomes.append(RevertOutcome(block_id, "kept_edited", "replaced"))
        else:
            assert diff.before is not None
            if current is not None:
                outcomes.append(RevertOutcome(block_id, "kept_present", "deleted"))
            else:
                reinsert.append(diff.before)
                outcomes.append(RevertOutcome(block_id, "reinserted", "deleted"))

    # Re-inserts go after their nearest predecessor (in the order before the turn) that is
    # still there once the turn's own blocks are gone; earlier re-inserts count.
    present = set(now_by) - deleting
    returning = {block.id for block in reinsert}
    previous: list[str] = []
    for block in base_of_turn:
        if not block.id:
            continue
        if block.id in returning:
            anchor = next((candidate for candidate in reversed(previous) if candidate in present), None)
            changes.append(Change("insert", block.id, block, anchor))
            present.add(block.id)
        previous.append(block.id)

    return RevertPlan(changes, outcomes, apply_changes_to_blocks(now, changes))
