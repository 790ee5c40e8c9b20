"""Applying prose ops to a fork of a real note, and the per-block review diff."""

from __future__ import annotations

import pytest

from fastpad.errors import StaleFrontier, ValidationFailed
from fastpad.notes import Block, NoteDocument
from fastpad.review.apply import (
    apply_changes,
    apply_changes_to_blocks,
    apply_prose,
    blocks_at,
    changes_from_diffs,
    check_fresh,
    diff_for_review,
    text_hunks,
)
from fastpad.review.ops import validate_ops

from .helpers import handles, note, resolved, texts

NOTE_ID = "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
SOURCE = "01JB2K7Q9XN4M8YV3TD0FZ5ERX"


def test_apply_leaves_the_note_alone_and_diffs_every_touched_block():
    doc = note("Intro.", "The cat sat.", "Obsolete line.", "End.")
    h = handles(doc, NOTE_ID)
    frontier = doc.frontier()
    ops = resolved(doc, NOTE_ID, [
        {"op": "replace_block", "handle": h[1], "text": "The cat sat on the mat.", "source_block_ids": [SOURCE]},
        {"op": "delete", "handle": h[2]},
        {"op": "insert_after", "handle": h[0], "text": "First new."},
        {"op": "insert_after", "handle": h[0], "text": "Second new."},
        {"op": "insert_before", "handle": None, "text": "Appendix."},
        {"op": "add_edge", "type": "cites", "to_note_id": SOURCE},  # not prose: skipped here
    ])
    result = apply_prose(doc, ops, at=frontier)

    assert doc.frontier() == frontier and texts(doc.blocks()) == ["Intro.", "The cat sat.", "Obsolete line.", "End."]
    assert texts(result.after) == ["Intro.", "First new.", "Second new.", "The cat sat on the mat.", "End.", "Appendix."]
    assert result.document.peer_id != doc.peer_id
    assert [(d.kind, d.before.text if d.before else None, d.after.text if d.after else None) for d in result.diffs] == [
        ("inserted", None, "First new."),
        ("inserted", None, "Second new."),
        ("replaced", "The cat sat.", "The cat sat on the mat."),
        ("deleted", "Obsolete line.", None),
        ("inserted", None, "Appendix."),
    ]
    replaced = result.diffs[2]
    assert replaced.source_block_ids == (SOURCE,)
    assert [(h.op, h.before, h.after) for h in replaced.hunks] == [
        ("equal", "The cat sat", "The cat sat"), ("insert", "", " on the mat"), ("equal", ".", "."),
    ]
    assert result.diffs[0].after_id == doc.blocks()[0].id and result.diffs[1].after_id == result.diffs[0].block_id
    assert set(result.inserted) == {2, 3, 4}


def test_the_update_and_the_changes_land_the_same_result():
    doc = note("a", "b", "c")
    h = handles(doc, NOTE_ID)
    result = apply_prose(doc, resolved(doc, NOTE_ID, [
        {"op": "replace_block", "handle": h[1], "text": "B", "type": "heading", "attrs": {"level": 2}},
        {"op": "insert_after", "handle": h[2], "text": "d"},
        {"op": "delete", "handle": h[0]},
    ]))
    by_update = NoteDocument.load(doc.snapshot())
    by_update.apply_update(result.update())
    by_changes = NoteDocument.load(doc.snapshot())
    apply_changes(by_changes, result.changes)
    assert by_update.blocks() == by_changes.blocks() == result.after
    assert apply_changes_to_blocks(doc.blocks(), result.changes) == result.after
    assert result.after[0] == Block(result.after[0].id, "heading", "B", {"level": 2})


def test_accept_some_reanchors_on_the_skipped_insert():
    doc = note("a", "z")
    h = handles(doc, NOTE_ID)
    result = apply_prose(doc, resolved(doc, NOTE_ID, [
        {"op": "insert_after", "handle": h[0], "text": "b"},
        {"op": "insert_after", "handle": h[0], "text": "c"},
        {"op": "replace_block", "handle": h[1], "text": "Z"},
    ]))
    b, c = result.inserted[0], result.inserted[1]
    some = changes_from_diffs(result.diffs, only={c})
    assert some[0].after_id == doc.blocks()[0].id
    apply_changes(doc, some)
    assert texts(doc.blocks()) == ["a", "c", "z"]
    assert b not in {block.id for block in doc.blocks()}


def test_op_rules_against_the_note():
    doc = note("a", "b")
    h = handles(doc, NOTE_ID)
    cases = [
        ([{"op": "delete", "handle": h[0]}, {"op": "replace_block", "handle": h[0], "text": "x"}], "ops[1].handle", "block_deleted"),
        ([{"op": "replace_block", "handle": h[0], "text": "x"}, {"op": "replace_block", "handle": h[0], "text": "y"}], "ops[1].handle", "duplicate_target"),
        ([{"op": "delete", "handle": h[1]}, {"op": "insert_after", "handle": h[1], "text": "x"}], "ops[1].handle", "block_deleted"),
        ([{"op": "replace_block", "handle": h[0], "text": "x", "attrs": {"level": 2}}], "ops[0].attrs.level", "unknown_attr"),
    ]
    for raw, field, code in cases:
        with pytest.raises(ValidationFailed) as bad:
            apply_prose(doc, resolved(doc, NOTE_ID, raw))
        assert (bad.value.field_errors[0].field, bad.value.field_errors[0].code) == (field, code)
    # a block id from somewhere else, or a handle nobody resolved
    [unknown] = validate_ops([{"op": "delete", "handle": "h1.x"}])
    with pytest.raises(ValidationFailed) as bad:
        apply_prose(doc, [unknown.__class__(handle="h1.x", block_id=SOURCE)])
    assert bad.value.field_errors[0].code == "unknown_block"
    with pytest.raises(ValidationFailed) as bad:
        apply_prose(doc, [unknown])
    assert bad.value.field_errors[0].code == "unresolved_handle"


def test_stale_frontier_between_fetch_and_propose():
    doc = note("a", "b")
    h = handles(doc, NOTE_ID)
    read_at = doc.frontier()
    doc.replace_text(doc.blocks()[0].id, "a, edited by a person")
    with pytest.raises(StaleFrontier) as stale:
        check_fresh(doc, read_at)
    assert stale.value.extra == {"expected_frontier": read_at, "current_frontier": doc.frontier()}
    with pytest.raises(StaleFrontier):  # the handle itself carries the read frontier too
        resolved(doc, NOTE_ID, [{"op": "delete", "handle": h[1]}])
    check_fresh(doc, doc.frontier())
    never_seen = note("q", "r", "s", peer_id=77).frontier()
    with pytest.raises(ValidationFailed) as unknown:  # not stale: wrong
        check_fresh(doc, never_seen)
    assert unknown.value.field_errors[0].code == "unknown_frontier"


def test_blocks_at_reads_the_past():
    doc = note("one")
    then = doc.frontier()
    doc.replace_text(doc.blocks()[0].id, "two")
    assert texts(blocks_at(doc, then)) == ["one"] and texts(doc.blocks()) == ["two"]


def test_diff_for_review_by_id_and_inline_hunks():
    a = Block("01JB2K7Q9XN4M8YV3TD0FZ5ER1", "paragraph", "keep")
    b = Block("01JB2K7Q9XN4M8YV3TD0FZ5ER2", "paragraph", "gone")
    c = Block("01JB2K7Q9XN4M8YV3TD0FZ5ER3", "paragraph", "The quick brown fox.")
    d = Block("01JB2K7Q9XN4M8YV3TD0FZ5ER4", "paragraph", "new")
    diffs = diff_for_review([a, b, c], [a, d, Block(c.id, "paragraph", "The slow brown fox.")], default_sources=(SOURCE,))
    assert [(x.kind, x.block_id) for x in diffs] == [("deleted", b.id), ("inserted", d.id), ("replaced", c.id)]
    assert diffs[1].after_id == a.id and all(x.source_block_ids == (SOURCE,) for x in diffs)
    assert [(h.op, h.before, h.after) for h in diffs[2].hunks] == [
        ("equal", "The ", "The "), ("replace", "quick", "slow"), ("equal", " brown fox.", " brown fox.")
    ]
    assert diff_for_review([a], [a]) == []
    assert [h.op for h in text_hunks("", "x")] == ["insert"]
