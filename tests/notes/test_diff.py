"""The push diff: identity from anchors, exactly, on hand-written cases."""

from __future__ import annotations

from fastpad.notes.blocks import Block, NoteMeta
from fastpad.notes.diff import BlockChange, diff_blocks
from fastpad.notes.markdown import parse_markdown, serialize_markdown

A, B, C, D = (
    "01JB2K7Q9XN4M8YV3TD0FZ5ERA",
    "01JB2K7Q9XN4M8YV3TD0FZ5ERB",
    "01JB2K7Q9XN4M8YV3TD0FZ5ERC",
    "01JB2K7Q9XN4M8YV3TD0FZ5ERD",
)

KNOWN = [
    Block(A, "heading", "Plan", {"level": 1}),
    Block(B, "paragraph", "First sentence. Second sentence."),
    Block(C, "list_item", "milk"),
    Block(D, "list_item", "eggs"),
]


def _diff(edited_markdown: str) -> list[BlockChange]:
    return diff_blocks(KNOWN, parse_markdown(edited_markdown).blocks)


def _kinds(changes: list[BlockChange]) -> list[tuple[str, str | None]]:
    return [(change.kind, change.block_id) for change in changes]


def test_unchanged_file_is_no_change() -> None:
    assert _diff(serialize_markdown(NoteMeta(), KNOWN)) == []


def test_changed_text_under_an_anchor_is_an_edit() -> None:
    text = serialize_markdown(NoteMeta(), KNOWN).replace("milk", "oat milk")
    (change,) = _diff(text)
    assert (change.kind, change.block_id, change.block.text) == ("edit", C, "oat milk")


def test_vanished_anchor_is_a_delete() -> None:
    text = serialize_markdown(NoteMeta(), [KNOWN[0], KNOWN[1], KNOWN[3]])
    assert _kinds(_diff(text)) == [("delete", C)]


def test_paragraph_without_anchor_is_an_insert_after_its_predecessor() -> None:
    text = serialize_markdown(NoteMeta(), KNOWN[:2]) + "\nA new thought.\n\n" + serialize_markdown(NoteMeta(), KNOWN[2:])
    (change,) = _diff(text)
    assert change.kind == "insert" and change.after_id == B
    assert change.block.text == "A new thought." and change.block.id not in {A, B, C, D}


def test_reordered_anchor_is_a_move_and_nothing_else() -> None:
    text = serialize_markdown(NoteMeta(), [KNOWN[0], KNOWN[1], KNOWN[3], KNOWN[2]])
    changes = _diff(text)
    assert len(changes) == 1
    assert changes[0].kind == "move"
    # Either list item may be the one that moved; the other stays put.
    assert (changes[0].block_id, changes[0].after_id) in {(D, B), (C, D)}


def test_moved_heading_to_the_end() -> None:
    text = serialize_markdown(NoteMeta(), [KNOWN[1], KNOWN[2], KNOWN[3], KNOWN[0]])
    assert [(c.kind, c.block_id, c.after_id) for c in _diff(text)] == [("move", A, D)]


def test_text_similarity_never_overrides_an_anchor() -> None:
    # The texts of C and D swapped, anchors stayed: two edits, no move.
    text = serialize_markdown(NoteMeta(), KNOWN).replace("milk", "TMP").replace("eggs", "milk").replace("TMP", "eggs")
    assert sorted(_kinds(_diff(text))) == [("edit", C), ("edit", D)]


def test_block_split_on_disk_keeps_the_id_on_the_first_half() -> None:
    # Splitting a paragraph in an editor leaves the anchor on the second half.
    text = serialize_markdown(NoteMeta(), KNOWN).replace("First sentence. Second", "First sentence.\n\nSecond")
    changes = _diff(text)
    assert [c.kind for c in changes] == ["split", "insert"]
    split, insert = changes
    assert (split.block_id, split.block.text) == (B, "First sentence.")
    assert (insert.after_id, insert.block.text) == (B, "Second sentence.")


def test_joined_blocks_keep_the_first_id_and_delete_the_second() -> None:
    for joiner in (" ", "\n  "):  # joined on one line, or as a continuation line
        text = serialize_markdown(NoteMeta(), KNOWN).replace("\n- eggs", joiner + "eggs")
        changes = _diff(text)
        assert _kinds(changes) == [("delete", D), ("edit", C)]
        assert changes[1].block.text == "milk" + joiner.replace("  ", "") + "eggs"


def test_table_cell_with_escaped_pipe_is_an_edit_of_that_row() -> None:
    header = Block(A, "table_row", "| key | value |", {"header": True, "delimiter": "| --- | --- |"})
    row = Block(B, "table_row", "| pipe | a \\| b |")
    known = [header, row]
    edited = serialize_markdown(NoteMeta(), known).replace("a \\| b", "a \\| b \\| c")
    (change,) = diff_blocks(known, parse_markdown(edited).blocks)
    assert (change.kind, change.block_id, change.block.text) == ("edit", B, "| pipe | a \\| b \\| c |")


def test_anchor_from_another_note_is_new_here() -> None:
    foreign = "01JB2K7Q9XN4M8YV3TD0FZ5EZZ"
    text = serialize_markdown(NoteMeta(), KNOWN) + f"\npasted {{#{foreign}}}\n"
    (change,) = _diff(text)
    assert change.kind == "insert" and change.block.id != foreign and change.after_id == D
