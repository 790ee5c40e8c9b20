"""Three-way merge on accept-after-edit (nothing lost) and whole-turn revert (later edits kept)."""

from __future__ import annotations

import pytest

from fastpad.errors import StaleFrontier
from fastpad.notes import Block, NoteDocument
from fastpad.review.apply import apply_changes, apply_prose, blocks_at, check_fresh
from fastpad.review.merge import merge_text, revert_plan, three_way_merge

from .helpers import handles, note, resolved, texts

NOTE_ID = "01JB2K7Q9XN4M8YV3TD0FZ5ERW"


def propose(doc: NoteDocument, raw_ops):
    """Propose against the note as read now; returns (base frontier, result)."""
    frontier = doc.frontier()
    return frontier, apply_prose(doc, resolved(doc, NOTE_ID, raw_ops), at=frontier)


def test_human_edit_elsewhere_merges_cleanly():
    doc = note("Alpha.", "Beta.", "Gamma.", "Delta.")
    h = handles(doc, NOTE_ID)
    base_frontier, proposal = propose(doc, [
        {"op": "replace_block", "handle": h[1], "text": "Beta, improved."},
        {"op": "delete", "handle": h[3]},
        {"op": "insert_after", "handle": h[2], "text": "Gamma and a half."},
    ])
    # while the proposal waits, a person edits another block and adds one of their own
    ids = [b.id for b in doc.blocks()]
    doc.replace_text(ids[0], "Alpha, as the person wrote it.")
    mine = doc.insert_after(ids[0], Block(None, "paragraph", "A person's new paragraph."))

    with pytest.raises(StaleFrontier):  # accept sees the note moved: the merge path, not a blind apply
        check_fresh(doc, base_frontier)
    merged = three_way_merge(blocks_at(doc, base_frontier), doc.blocks(), proposal.after)
    assert merged.clean
    expected = ["Alpha, as the person wrote it.", "A person's new paragraph.", "Beta, improved.", "Gamma.", "Gamma and a half."]
    assert texts(merged.blocks) == expected
    apply_changes(doc, merged.changes)
    assert texts(doc.blocks()) == expected and mine in {b.id for b in doc.blocks()}
    assert set(merged.taken) == {ids[1], ids[3], proposal.inserted[2]}


def test_block_changed_by_both_is_a_conflict_and_the_person_wins_in_place():
    doc = note("The plan ships in May.", "Other.")
    h = handles(doc, NOTE_ID)
    base_frontier, proposal = propose(doc, [
        {"op": "replace_block", "handle": h[0], "text": "The plan ships in June."},
        {"op": "replace_block", "handle": h[1], "text": "Other, clarified."},
    ])
    first = doc.blocks()[0].id
    doc.replace_text(first, "The plan ships in July, says the person.")

    merged = three_way_merge(blocks_at(doc, base_frontier), doc.blocks(), proposal.after)
    assert not merged.clean
    [conflict] = merged.conflicts
    assert conflict.kind == "both_changed" and conflict.block_id == first
    assert conflict.texts == ("The plan ships in May.", "The plan ships in July, says the person.", "The plan ships in June.")
    assert texts(merged.blocks) == ["The plan ships in July, says the person.", "Other, clarified."]
    apply_changes(doc, merged.changes)
    assert doc.block(first).text == "The plan ships in July, says the person."


def test_delete_versus_edit_conflicts_keep_the_persons_side():
    doc = note("Keep me.", "Edit me.", "Tail.")
    h = handles(doc, NOTE_ID)
    base_frontier, proposal = propose(doc, [
        {"op": "replace_block", "handle": h[0], "text": "Agent rewrote this."},
        {"op": "delete", "handle": h[1]},
        {"op": "insert_after", "handle": h[0], "text": "Agent's new block."},
    ])
    ids = [b.id for b in doc.blocks()]
    doc.delete(ids[0])  # the person deleted what the agent rewrote
    doc.replace_text(ids[1], "Edit me — the person did.")  # and edited what the agent deleted

    merged = three_way_merge(blocks_at(doc, base_frontier), doc.blocks(), proposal.after)
    kinds = {c.block_id: c.kind for c in merged.conflicts}
    assert kinds == {ids[0]: "deleted_by_person", ids[1]: "deleted_by_proposal"}
    by_id = {c.block_id: c for c in merged.conflicts}
    assert by_id[ids[0]].theirs.text == "Agent rewrote this." and by_id[ids[0]].ours is None
    assert by_id[ids[1]].ours.text == "Edit me — the person did." and by_id[ids[1]].theirs is None
    # the insert anchored on a block the person deleted still lands, at the nearest survivor
    assert texts(merged.blocks) == ["Agent's new block.", "Edit me — the person did.", "Tail."]


def test_conflict_offers_a_word_level_suggestion_but_never_applies_it():
    base = note("The plan ships in May and costs ten.")
    h = handles(base, NOTE_ID)
    base_frontier, proposal = propose(base, [
        {"op": "replace_block", "handle": h[0], "text": "The plan ships in June and costs ten."},
    ])
    block_id = base.blocks()[0].id
    base.replace_text(block_id, "The plan ships in May and costs twelve.")
    merged = three_way_merge(blocks_at(base, base_frontier), base.blocks(), proposal.after)
    [conflict] = merged.conflicts
    assert conflict.suggestion is not None and conflict.suggestion.text == "The plan ships in June and costs twelve."
    assert texts(merged.blocks) == ["The plan ships in May and costs twelve."]


def test_identical_changes_on_both_sides_agree():
    doc = note("x")
    h = handles(doc, NOTE_ID)
    base_frontier, proposal = propose(doc, [{"op": "replace_block", "handle": h[0], "text": "y"}])
    doc.replace_text(doc.blocks()[0].id, "y")
    merged = three_way_merge(blocks_at(doc, base_frontier), doc.blocks(), proposal.after)
    assert merged.clean and merged.changes == [] and texts(merged.blocks) == ["y"]


def test_merge_text():
    assert merge_text("a b c d", "A b c d", "a b c D") == "A b c D"
    assert merge_text("a b c", "a X c", "a Y c") is None
    assert merge_text("a b c", "a X c", "a X c") == "a X c"
    assert merge_text("a b", "a b", "a c") == "a c"


# -- revert ---------------------------------------------------------------------------------------


def applied_turn(doc: NoteDocument, raw_ops):
    """Apply a proposal to the note (accepted); returns (blocks before, blocks after, result)."""
    before = doc.blocks()
    _, proposal = propose(doc, raw_ops)
    apply_changes(doc, proposal.changes)
    return before, doc.blocks(), proposal


def test_revert_untouched_turn_restores_the_note_exactly():
    doc = note("One.", "Two.", "Three.")
    h = handles(doc, NOTE_ID)
    before, after, _ = applied_turn(doc, [
        {"op": "replace_block", "handle": h[0], "text": "One, by the agent."},
        {"op": "delete", "handle": h[1]},
        {"op": "insert_after", "handle": h[2], "text": "Four."},
    ])
    plan = revert_plan(before, after, doc.blocks())
    assert {o.outcome for o in plan.outcomes} == {"restored", "reinserted", "deleted"} and not plan.kept
    apply_changes(doc, plan.changes)
    assert doc.blocks() == before  # same ids, same order, same text: the deleted block came back with its id


def test_revert_keeps_a_later_human_edit():
    doc = note("Intro.", "Body.", "Outro. See you soon.")
    h = handles(doc, NOTE_ID)
    before, after, proposal = applied_turn(doc, [
        {"op": "insert_after", "handle": h[0], "text": "Agent paragraph."},
        {"op": "insert_after", "handle": h[2], "text": "Agent footnote."},
        {"op": "replace_block", "handle": h[1], "text": "Body, rewritten by the agent."},
        {"op": "replace_block", "handle": h[2], "text": "Outro, by the agent. See you soon."},
    ])
    para, footnote = proposal.inserted[0], proposal.inserted[1]
    body, outro = before[1].id, before[2].id
    # a person builds on the turn
    doc.replace_text(para, "Agent paragraph, which the person then edited.")
    doc.replace_text(body, "Body, rewritten by the agent and then by the person.")
    doc.replace_text(outro, "Outro, by the agent. See you very soon.")

    plan = revert_plan(before, after, doc.blocks())
    outcome = {o.block_id: o.outcome for o in plan.outcomes}
    assert outcome == {
        para: "kept_edited",  # inserted by the turn, edited by a person: theirs now
        footnote: "deleted",  # inserted by the turn, untouched: goes
        body: "kept_edited",  # person's edit overlaps the agent's: left as the person made it
        outro: "restored_around_edit",  # the agent's words undone, the person's fix kept
    }
    apply_changes(doc, plan.changes)
    assert texts(doc.blocks()) == [
        "Intro.",
        "Agent paragraph, which the person then edited.",
        "Body, rewritten by the agent and then by the person.",
        "Outro. See you very soon.",
    ]
    assert footnote not in {b.id for b in doc.blocks()}


def test_revert_keeps_an_edit_touching_the_agents_words_whole():
    doc = note("Outro.")
    h = handles(doc, NOTE_ID)
    before, after, _ = applied_turn(doc, [{"op": "replace_block", "handle": h[0], "text": "Outro, by the agent."}])
    doc.replace_text(before[0].id, "Outro, by the agent, fixed by the person.")
    plan = revert_plan(before, after, doc.blocks())
    assert [o.outcome for o in plan.outcomes] == ["kept_edited"] and plan.changes == []
    assert [o.block_id for o in plan.kept] == [before[0].id]


def test_revert_leaves_a_later_human_deletion_alone():
    doc = note("A.", "B.")
    h = handles(doc, NOTE_ID)
    before, after, proposal = applied_turn(doc, [
        {"op": "replace_block", "handle": h[0], "text": "A by agent."},
        {"op": "insert_after", "handle": h[1], "text": "C by agent."},
    ])
    doc.delete(before[0].id)
    doc.delete(proposal.inserted[1])
    plan = revert_plan(before, after, doc.blocks())
    assert {o.outcome for o in plan.outcomes} == {"kept_deleted"} and plan.changes == []
    assert texts(plan.blocks) == ["B."]


def test_reinsert_finds_a_surviving_anchor():
    doc = note("A.", "B.", "C.")
    h = handles(doc, NOTE_ID)
    before, after, _ = applied_turn(doc, [{"op": "delete", "handle": h[1]}])
    doc.delete(before[0].id)  # the person later deleted the block B used to follow
    plan = revert_plan(before, after, doc.blocks())
    apply_changes(doc, plan.changes)
    assert texts(doc.blocks()) == ["B.", "C."] and doc.blocks()[0].id == before[1].id
