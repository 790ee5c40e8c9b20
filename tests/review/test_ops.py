"""The op model: validation names the field, limits hold, edges and events wait for a person."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fastpad.errors import OutOfScope, ValidationFailed
from fastpad.review.ops import (
    MAX_OPS,
    MAX_TEXT_CHARS,
    MAX_TOTAL_TEXT_CHARS,
    AddEdge,
    AddEvent,
    Delete,
    InsertAfter,
    InsertBefore,
    MoveEvent,
    ReplaceBlock,
    needs_person,
    proposal_fingerprint,
    resolve_handles,
    validate_ops,
    validate_proposal,
)

ULID_A = "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
ULID_B = "01JB2K7Q9XN4M8YV3TD0FZ5ERX"


def fields(exc: ValidationFailed) -> dict[str, str]:
    return {error.field: error.code for error in exc.field_errors}


def test_all_seven_kinds_validate_into_typed_ops():
    ops = validate_ops([
        {"op": "insert_after", "handle": "h1.a", "text": "New.", "source_block_ids": [ULID_A]},
        {"op": "insert_before", "handle": None, "text": "Tail", "type": "heading", "attrs": {"level": 2}},
        {"op": "replace_block", "handle": "h1.b", "text": "Better."},
        {"op": "delete", "handle": "h1.c"},
        {"op": "add_edge", "type": "cites", "to_note_id": ULID_A, "to_block_id": ULID_B, "evidence": "see §2"},
        {"op": "add_event", "title": "Review", "start": "2025-03-01T09:00:00+01:00", "end": "2025-03-01T10:00:00+01:00"},
        {"op": "move_event", "event_id": ULID_B, "start": "2025-03-02T09:00:00Z", "end": "2025-03-02T09:30:00Z"},
    ])
    assert [type(op) for op in ops] == [InsertAfter, InsertBefore, ReplaceBlock, Delete, AddEdge, AddEvent, MoveEvent]
    assert ops[0].source_block_ids == (ULID_A,) and ops[0].type == "paragraph"
    assert ops[1].attrs == {"level": 2} and ops[1].handle is None
    assert ops[2].type is None and ops[2].attrs is None
    assert ops[5].start == datetime(2025, 3, 1, 8, 0, tzinfo=timezone.utc)


def test_edges_and_events_always_need_a_person():
    ops = validate_ops([
        {"op": "insert_after", "handle": "h1.a", "text": "x"},
        {"op": "replace_block", "handle": "h1.a", "text": "x"},
        {"op": "delete", "handle": "h1.a"},
        {"op": "add_edge", "type": "related", "to_note_id": ULID_A},
        {"op": "add_event", "title": "t", "start": "2025-03-01T09:00:00Z", "end": "2025-03-01T09:00:00Z"},
        {"op": "move_event", "event_id": ULID_A, "start": "2025-03-01T09:00:00Z", "end": "2025-03-01T10:00:00Z"},
    ])
    assert [needs_person(op) for op in ops] == [False, False, False, True, True, True]


def test_errors_name_every_bad_field():
    with pytest.raises(ValidationFailed) as bad:
        validate_ops([
            {"op": "insert_after", "handle": "h1.a", "text": "fine"},
            {"op": "replace_block", "text": "no handle"},
            {"op": "insert_after", "handle": "h1.a", "text": 7},
            {"op": "insert_after", "handle": "h1.a", "text": "x" * (MAX_TEXT_CHARS + 1)},
            {"op": "insert_after", "handle": "h1.a", "text": "x", "type": "banner"},
            {"op": "insert_after", "handle": "h1.a", "text": "x", "type": "heading", "attrs": {"level": "2", "colour": 1}},
            {"op": "delete", "handle": "h1.a", "text": "stray"},
            {"op": "teleport"},
            "not an object",
            {"op": "add_edge", "type": "has space", "to_note_id": "nope"},
            {"op": "add_event", "title": "t", "start": "2025-03-01T09:00:00", "end": "2025-03-01T08:00:00Z"},
            {"op": "move_event", "event_id": ULID_A, "start": "2025-03-02T09:00:00Z", "end": "2025-03-01T09:00:00Z"},
            {"op": "insert_after", "handle": "h1.a", "text": "x", "source_block_ids": [ULID_A, "bad"]},
            {"op": "insert_after", "handle": "h1.a", "text": "\ud800"},
        ])
    assert fields(bad.value) == {
        "ops[1].handle": "required",
        "ops[2].text": "invalid_type",
        "ops[3].text": "max_length",
        "ops[4].type": "unknown_type",
        "ops[5].attrs.level": "invalid_type",
        "ops[5].attrs.colour": "unknown_attr",
        "ops[6].text": "unknown_field",
        "ops[7].op": "unknown_op",
        "ops[8]": "invalid_type",
        "ops[9].type": "invalid_value",
        "ops[9].to_note_id": "ulid",
        "ops[10].start": "invalid_timestamp",
        "ops[11].end": "before_start",
        "ops[12].source_block_ids[1]": "ulid",
        "ops[13].text": "invalid_text",
    }
    assert bad.value.slug == "validation-failed" and bad.value.detail.startswith("ops[1].handle")


def test_limits_on_count_and_total_text():
    with pytest.raises(ValidationFailed) as too_many:
        validate_ops([{"op": "delete", "handle": "h1.a"}] * (MAX_OPS + 1))
    assert fields(too_many.value) == {"ops": "max_items"}
    per_op = MAX_TEXT_CHARS
    count = MAX_TOTAL_TEXT_CHARS // per_op + 1
    with pytest.raises(ValidationFailed) as too_much:
        validate_ops([{"op": "insert_after", "handle": None, "text": "x" * per_op}] * count)
    assert fields(too_much.value) == {"ops": "max_total_text"}
    with pytest.raises(ValidationFailed) as empty:
        validate_ops([])
    assert fields(empty.value) == {"ops": "min_items"}
    with pytest.raises(ValidationFailed) as not_list:
        validate_ops({"op": "delete"})
    assert fields(not_list.value) == {"ops": "invalid_type"}


def test_field_errors_are_capped_at_fifty():
    with pytest.raises(ValidationFailed) as bad:
        validate_ops([{"op": "replace_block"}] * 40)  # two errors each
    assert len(bad.value.field_errors) == 50 and bad.value.extra["field_errors_truncated"] == 30


def test_proposal_envelope():
    body = {
        "note_id": ULID_A,
        "ops": [{"op": "delete", "handle": "h1.a"}, {"op": "add_edge", "type": "cites", "to_note_id": ULID_B}],
        "expected_frontier": "fp1:AQUi",
        "idempotency_key": "k-1",
        "source_block_ids": [ULID_B],
    }
    proposal = validate_proposal(body)
    assert proposal.dry_run is False and proposal.source_block_ids == (ULID_B,) and proposal.needs_person
    with pytest.raises(ValidationFailed) as bad:
        validate_proposal({"note_id": "x", "ops": [], "dry_run": "yes", "extra": 1})
    assert fields(bad.value) == {
        "extra": "unknown_field",
        "note_id": "ulid",
        "expected_frontier": "required",
        "idempotency_key": "required",
        "dry_run": "invalid_type",
        "ops": "min_items",
    }


def test_fingerprint_ignores_key_order_but_not_content():
    a = {"ops": [{"op": "delete", "handle": "h"}], "idempotency_key": "k"}
    b = {"idempotency_key": "k", "ops": [{"handle": "h", "op": "delete"}]}
    assert proposal_fingerprint(a) == proposal_fingerprint(b)
    assert proposal_fingerprint(a) != proposal_fingerprint({**a, "dry_run": True})


def test_resolve_handles_fills_block_ids_and_passes_errors_through():
    ops = validate_ops([
        {"op": "insert_after", "handle": None, "text": "top"},
        {"op": "replace_block", "handle": "h1.good", "text": "x"},
        {"op": "add_edge", "type": "cites", "to_note_id": ULID_A, "handle": "h1.good"},
    ])
    resolved = resolve_handles(ops, lambda handle, field: {"h1.good": ULID_B}[handle])
    assert [op.block_id for op in resolved] == [None, ULID_B, ULID_B]

    def refuse(handle, field):
        raise OutOfScope(detail="inert", field_errors=[])

    with pytest.raises(OutOfScope):
        resolve_handles(ops, refuse)
    seen = []
    resolve_handles(ops, lambda handle, field: seen.append(field) or ULID_B)
    assert seen == ["ops[1].handle", "ops[2].handle"]
