"""Proposals and review, the store-independent core: the op model, applying prose ops to
a fork of a note, the per-block review diff, the cross-note copy guard, the three-way merge
for accept-after-edit and the whole-turn revert plan. Anchor handles live in
``fastpad.security.handles``."""

from fastpad.review.apply import (
    BlockDiff,
    Change,
    Hunk,
    ProseResult,
    apply_changes,
    apply_changes_to_blocks,
    apply_prose,
    blocks_at,
    changes_from_diffs,
    check_fresh,
    diff_for_review,
    fork_at,
)
from fastpad.review.copy_guard import CopyVerdict, NewText, ReadText, check_copy, guard_copy, new_texts_from_diffs
from fastpad.review.merge import MergeConflict, MergeResult, RevertPlan, merge_text, revert_plan, three_way_merge
from fastpad.review.ops import (
    Op,
    ProposalRequest,
    ProseOp,
    needs_person,
    proposal_fingerprint,
    resolve_handles,
    validate_ops,
    validate_proposal,
)

__all__ = [
    "BlockDiff",
    "Change",
    "CopyVerdict",
    "Hunk",
    "MergeConflict",
    "MergeResult",
    "NewText",
    "Op",
    "ProposalRequest",
    "ProseOp",
    "ProseResult",
    "ReadText",
    "RevertPlan",
    "apply_changes",
    "apply_changes_to_blocks",
    "apply_prose",
    "blocks_at",
    "changes_from_diffs",
    "check_copy",
    "check_fresh",
    "diff_for_review",
    "fork_at",
    "guard_copy",
    "merge_text",
    "needs_person",
    "new_texts_from_diffs",
    "proposal_fingerprint",
    "resolve_handles",
    "revert_plan",
    "three_way_merge",
    "validate_ops",
    "validate_proposal",
]
