"""``fastpad_propose``: the only write. Ops against one note, addressed by anchor handle,
become a durable proposal (a turn) with a review URL (``ReviewService.propose``); a
``new_note`` instead proposes a note that exists once a person accepts it
(``ReviewService.propose_note``) — so creating a note needs no thirteenth tool.

A redaction placeholder (``[redacted:rule:fingerprint]``) in proposed text is refused
(``validation-failed``, code ``redacted_placeholder``), never written and never
restored: the agent only ever saw the placeholder, so accepting text that carries it
would replace the person's real secret with the mask, and restoring the secret
server-side would have the server write, on the agent's say-so, a value the agent was
never shown (one from another note, even). An agent edits around a secret — the other
blocks, or a new block — or hands the change to a person.
"""

from __future__ import annotations

from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.mcp.tools.turn_views import diff_views, turn_view
from fastpad.outbound.secrets import PLACEHOLDER_RE
from fastpad.review.ops import MAX_OPS, OP_KINDS
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_PROPOSE


def run(call: Call) -> ToolOutput:
    args = call.args
    review = call.deployment.review
    if "new_note" in args:
        _exclusive(args)
        refuse_placeholders([args["new_note"]], field="new_note")
        turn = review.propose_note(call.principal, call.session, args["new_note"], args["idempotency_key"],
                                   dry_run=args.get("dry_run", False))
    else:
        _required(args)
        refuse_placeholders(args["ops"])
        turn = review.propose(
            call.principal, call.session, args["note_id"], args["ops"], args["expected_frontier"],
            args["idempotency_key"], dry_run=args.get("dry_run", False),
            source_block_ids=args.get("source_block_ids", ()),
        )
    if turn.dry_run:
        next_call = "fastpad_propose again without dry_run to store it for review"
    elif turn.authority:
        next_call = "it landed under auto-apply; a person can review or revert it on the Agent activity page"
    else:
        next_call = "hand turn.review_url to a person; fastpad_turn with action status shows where it stands"
    rest = ("propose fewer ops to see every diff" if turn.dry_run
            else "the whole diff: fastpad_turn with action diff and this turn_id, which pages")
    return ToolOutput({"turn": turn_view(turn), "next": next_call}, key="diffs", items=diff_views(turn),
                      item_id=lambda diff: diff["block_id"], notice=True, rest=rest)


_EDIT_ARGS = ("note_id", "ops", "expected_frontier")


def _exclusive(args: dict[str, Any]) -> None:
    given = [name for name in (*_EDIT_ARGS, "source_block_ids") if name in args]
    if given:
        raise ValidationFailed(
            detail="new_note proposes a note that does not exist yet: send it without note_id, ops and "
                   "expected_frontier",
            field_errors=[FieldError(name, "exclusive", "not together with new_note") for name in given],
        )


def _required(args: dict[str, Any]) -> None:
    missing = [name for name in _EDIT_ARGS if name not in args]
    if missing:
        raise ValidationFailed(
            detail="an edit names its note_id, ops and expected_frontier (or send new_note to propose a new note)",
            field_errors=[FieldError(name, "required", "required without new_note") for name in missing],
        )


def refuse_placeholders(ops: list[Any], *, field: str = "ops") -> None:
    """``validation-failed`` naming every op (or new-note) field that carries a redaction placeholder."""
    def at(index: int, key: str) -> str:
        return f"{field}[{index}].{key}" if field == "ops" else f"{field}.{key}"

    errors = [
        FieldError(at(i, key), "redacted_placeholder",
                   "carries a redaction placeholder; leave the secret's block as it is and propose around it")
        for i, op in enumerate(ops) if isinstance(op, dict)
        for key, value in op.items() if isinstance(value, str) and PLACEHOLDER_RE.search(value)
    ]
    if errors:
        raise ValidationFailed(
            detail="Proposed text carries a redaction placeholder. The placeholder stands for a secret you were "
                   "never shown; writing it would replace the person's real value.",
            field_errors=errors,
            next_call="fastpad_propose without the placeholder: change other blocks, or ask a person to edit it",
        )


_OP = s.obj({
    "op": s.enum(*OP_KINDS),
    "handle": s.desc(s.NULLABLE_STR, "from fastpad_fetch with_handles; null: note start (insert_after) or end"),
    "text": s.STR, "type": s.desc(s.STR, "block or edge type"), "attrs": s.OBJ,
    "source_block_ids": s.STRS,
    "to_note_id": s.STR, "to_block_id": s.STR, "evidence": s.STR,
    "title": s.STR, "start": s.STR, "end": s.STR, "location": s.STR, "event_id": s.STR,
}, "op")


def _destructive(principal: Principal) -> bool:
    return principal.auto_apply  # an auto-apply token's prose lands at once, deletions included


TOOL = ToolSpec(
    name="fastpad_propose",
    title="Propose an edit",
    description="The only write: ops on one note become a proposal a person reviews (hand them its review_url). "
                "Prose ops (insert_after, insert_before, replace_block, delete) take a block handle; add_edge, "
                "add_event, move_event always wait for a person. new_note instead of note_id, ops and "
                "expected_frontier proposes a note. dry_run: validate and diff only. Cite sources in "
                "source_block_ids; never paste another note's text.",
    scopes=(NOTES_PROPOSE,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "note_id": s.STR,
        "ops": s.array(_OP, minItems=1, maxItems=MAX_OPS),
        "expected_frontier": s.desc(s.STR, "the frontier fastpad_fetch returned"),
        "new_note": s.desc(s.obj({"title": s.STR, "markdown": s.STR, "types": s.STRS, "properties": s.OBJ}),
                           "a note proposed whole; it exists once accepted"),
        "idempotency_key": s.desc(s.STR, "required; retry a dropped call with the same key"),
        "dry_run": s.BOOL,
        "source_block_ids": s.STRS,
    }, "session", "idempotency_key"),
    output_schema=s.outputs({"turn": s.OBJ, "diffs": s.array(s.OBJ), "next": s.STR, **s.BUDGET}, "turn"),
    run=run,
    read_only=lambda principal: False,
    destructive=_destructive,
)
