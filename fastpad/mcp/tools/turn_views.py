"""How a turn (a proposal) looks in a tool result: its state, and its per-block diffs as
the list the outbound path may cut."""

from __future__ import annotations

from typing import Any

from fastpad.review.turns import Turn

TURN_ID = "turn_id"


def turn_view(turn: Turn) -> dict[str, Any]:
    """Everything about a turn but its diffs."""
    view: dict[str, Any] = {
        TURN_ID: turn.id, "note_id": turn.note_id, "status": turn.status, "open": turn.open,
        "review_url": turn.review_url, "expected_frontier": turn.expected_frontier,
        "pending_block_ids": list(turn.pending_block_ids), "landed_block_ids": list(turn.landed_block_ids),
    }
    if turn.pending_ops or turn.accepted_ops:
        view["pending_ops"], view["accepted_ops"] = list(turn.pending_ops), list(turn.accepted_ops)
    for flag in ("dry_run", "replayed"):
        if getattr(turn, flag):
            view[flag] = True
    if turn.authority:
        view["authority"] = turn.authority
    if turn.new_note is not None:  # the note it proposes; it exists once a first part is accepted
        view["new_note"] = turn.new_note
    if turn.created_at is not None:
        view["created_at"] = turn.created_at.isoformat()
    return view


def diff_views(turn: Turn) -> list[dict[str, Any]]:
    """One item per block the turn touches: what it was, what it would be, and where it stands."""
    return [{
        "block_id": diff.block_id, "kind": diff.kind, "state": turn.block_state(diff.block_id),
        "before": None if diff.before is None else diff.before.text,
        "after": None if diff.after is None else diff.after.text,
        **({"source_block_ids": list(diff.source_block_ids)} if diff.source_block_ids else {}),
    } for diff in turn.diffs]
