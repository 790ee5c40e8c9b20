"""``fastpad_turn``: your own proposals — list them, see one's status or diff, abandon it,
or accept it (only under ``turns:accept``, and only prose; otherwise
``approve-not-permitted`` names the review URL to hand to a person)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.mcp import schemas as s
from fastpad.mcp.keys import KEY_ARGUMENT, once
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.mcp.tools.turn_views import TURN_ID, diff_views, turn_view
from fastpad.review.turns import STATUS_FILTERS
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_PROPOSE, NOTES_READ, TURNS_ACCEPT

ACTIONS = ("status", "diff", "abandon", "accept", "list")
LIST_LIMIT = 50


def run(call: Call) -> ToolOutput:
    args = call.args
    action = args.get("action", "status")
    review = call.deployment.review
    principal = call.principal
    if action == "list":
        page = review.list(principal, status=args.get("status"), mine=True, cursor=args.get("cursor"),
                           limit=LIST_LIMIT)
        items = [turn_view(turn) for turn in page.items]
        data = {"next_cursor": page.next_cursor} if page.next_cursor else {}
        return ToolOutput(data, key="turns", items=items, item_id=lambda t: t[TURN_ID],
                          page_cursor=lambda kept: page.next_cursor if kept >= len(items) else items[kept - 1][TURN_ID])
    turn_id = args.get("turn_id")
    if not turn_id:
        raise ValidationFailed(detail=f"action {action} needs turn_id",
                               field_errors=[FieldError("turn_id", "required", "the turn_id fastpad_propose returned")])
    if action == "status":
        return ToolOutput({"turn": turn_view(review.get(principal, turn_id))})
    if action == "diff":
        shown = review.review(principal, turn_id)
        data: dict[str, Any] = {"turn": turn_view(shown.turn), "note_moved": shown.note_moved}
        if shown.merge is not None and shown.merge.conflicts:
            data["conflicts"] = [c.block_id for c in shown.merge.conflicts]
        return ToolOutput(data, key="diffs", items=diff_views(shown.turn), item_id=lambda d: d["block_id"],
                          notice=True)
    if action == "abandon":
        return _decided(call, lambda: ToolOutput({"turn": turn_view(review.abandon(principal, turn_id))}))

    def accept() -> ToolOutput:
        decision = review.accept(principal, turn_id, block_ids=args.get("block_ids"))
        return ToolOutput({"turn": turn_view(decision.turn), "frontier": decision.frontier,
                           "landed_block_ids": list(decision.landed_block_ids), "merged": decision.merged})

    return _decided(call, accept)


def _decided(call: Call, decide: Callable[[], ToolOutput]) -> ToolOutput:
    """A decision once per idempotency_key; a replay's turn says ``replayed``, as fastpad_propose's does."""
    output, replayed = once(call, decide)
    if replayed:
        output.data["turn"] = {**output.data["turn"], "replayed": True}
    return output


def _read_only(principal: Principal) -> bool:
    return not principal.has(NOTES_PROPOSE)  # without proposals of its own there is nothing to abandon or accept


def _destructive(principal: Principal) -> bool:
    return principal.has(TURNS_ACCEPT)  # accepting lands prose, deletions included


TOOL = ToolSpec(
    name="fastpad_turn",
    title="Your proposals",
    description="Your own proposals: action list, status, diff (per-block before/after), abandon, or accept "
                "(block_ids: some). Accepting needs turns:accept; without it: approve-not-permitted and the "
                "review_url for a person.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "action": s.enum(*ACTIONS),
        "turn_id": s.STR,
        "block_ids": s.STRS,
        "status": s.desc(s.enum(*STATUS_FILTERS), "list: only these (waiting: something still undecided)"),
        "cursor": s.CURSOR,
        KEY_ARGUMENT: s.desc(s.STR, "abandon, accept: a retry under the same key returns the first answer"),
    }, "session"),
    output_schema=s.outputs({"turn": s.OBJ, "turns": s.array(s.OBJ), "diffs": s.array(s.OBJ), **s.BUDGET}),
    run=run,
    read_only=_read_only,
    destructive=_destructive,
)
