"""NoteDocument: every edit, metadata, snapshots, and errors on unknown ids — on real Loro."""

from __future__ import annotations

import random
import time

import pytest
from loro import ExportMode, LoroDoc, LoroMap, LoroText

from fastpad.errors import NotFound, ValidationFailed
from fastpad.notes import Block, NoteDocument, NoteMeta, is_ulid


def note(*texts: str, peer_id: int = 1) -> NoteDocument:
    return NoteDocument.new(blocks=[Block(None, "paragraph", text) for text in texts], peer_id=peer_id)


def texts(doc: NoteDocument) -> list[str]:
    return [block.text for block in doc.blocks()]


def ids(doc: NoteDocument) -> list[str]:
    return [block.id for block in doc.blocks()]


def assert_index_consistent(doc: NoteDocument) -> None:
    """The cached id→index map agrees with a fresh read of the document."""
    fresh = NoteDocument.load(doc.snapshot())
    for position, block_id in enumerate(ids(fresh)):
        assert doc.index_of(block_id) == position


def test_new_note_mints_ulids_and_keeps_given_ones():
    given = "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
    doc = NoteDocument.new(
        NoteMeta(title="Retrieval design", types=("Project",), properties={"status": "active"}),
        [Block(given, "heading", "Retrieval design", {"level": 1}), Block(None, "paragraph", "Body")],
        peer_id=7,
    )
    blocks = doc.blocks()
    assert blocks[0] == Block(given, "heading", "Retrieval design", {"level": 1})
    assert is_ulid(blocks[1].id) and blocks[1].id != given
    assert len(doc) == 2 and doc.peer_id == 7
    assert doc.block(given).text == "Retrieval design"


def test_new_rejects_bad_and_duplicate_ids():
    with pytest.raises(ValidationFailed) as bad:
        NoteDocument.new(blocks=[Block("not-a-ulid", "paragraph")])
    assert bad.value.field_errors[0].code == "invalid_id"
    dup = "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
    with pytest.raises(ValidationFailed) as twice:
        NoteDocument.new(blocks=[Block(dup, "paragraph"), Block(dup, "paragraph")])
    assert twice.value.field_errors[0].code == "duplicate_id"


def test_insert_after_and_before():
    doc = note("b")
    [b] = ids(doc)
    a = doc.insert_after(None, Block(None, "paragraph", "a"))
    d = doc.insert_before(None, Block(None, "paragraph", "d"))
    c = doc.insert_before(d, Block(None, "paragraph", "c"))
    doc.insert_after(c, Block(None, "heading", "c2", {"level": 3}))
    assert texts(doc) == ["a", "b", "c", "c2", "d"]
    assert ids(doc)[:3] == [a, b, c]
    assert doc.blocks()[3].attrs == {"level": 3}
    assert_index_consistent(doc)
    with pytest.raises(ValidationFailed) as dup:
        doc.insert_after(None, Block(a, "paragraph", "again"))
    assert dup.value.field_errors[0].code == "duplicate_id"


def test_replace_text_is_a_diff_and_counts_code_points():
    doc = note("naïve 😀 text")
    [block_id] = ids(doc)
    before = doc.loro.oplog_vv.get_last(1)
    doc.replace_text(block_id, "naïve 😀 context")
    # A diff touches only what changed: "te" -> "conte" is 3 inserted atoms, not a rewrite.
    assert doc.loro.oplog_vv.get_last(1) - before == 3
    assert doc.block(block_id).text == "naïve 😀 context"


def test_set_block_changes_type_and_merges_attrs():
    doc = NoteDocument.new(blocks=[Block(None, "list_item", "milk", {"depth": 2, "marker": "*"})])
    [block_id] = ids(doc)
    doc.set_block(block_id, type="task", attrs={"checked": True})
    assert doc.block(block_id) == Block(
        block_id, "task", "milk", {"ordered": False, "marker": "*", "number": 1, "depth": 2, "checked": True}
    )
    doc.set_block(block_id, type="heading")
    assert doc.block(block_id).attrs == {"level": 1}
    frontier = doc.frontier()
    doc.set_block(block_id, attrs={"level": 1})  # nothing changes, so nothing is written
    assert doc.frontier() == frontier


def test_set_block_rejects_unknown_type_and_attrs():
    doc = note("x")
    [block_id] = ids(doc)
    for kwargs, code in [
        ({"type": "banner"}, "unknown_type"),
        ({"attrs": {"levl": 2}}, "unknown_attr"),
        ({"type": "heading", "attrs": {"level": object()}}, "invalid_value"),
    ]:
        with pytest.raises(ValidationFailed) as error:
            doc.set_block(block_id, **kwargs)
        assert error.value.field_errors[0].code == code
    assert doc.blocks() == [Block(block_id, "paragraph", "x")]


def test_delete():
    doc = note("a", "b", "c")
    a, b, c = ids(doc)
    doc.delete(b)
    assert ids(doc) == [a, c]
    assert_index_consistent(doc)
    with pytest.raises(NotFound):
        doc.block(b)


def test_move_after_keeps_the_block():
    doc = note("a", "b", "c", "d")
    a, b, c, d = ids(doc)
    doc.move_after(a, c)
    assert ids(doc) == [b, c, a, d]
    doc.move_after(d, None)
    assert ids(doc) == [d, b, c, a]
    doc.move_after(c, b)  # already there: no op
    assert ids(doc) == [d, b, c, a]
    doc.move_after(d, a)
    assert ids(doc) == [b, c, a, d]
    assert_index_consistent(doc)


def test_split_keeps_the_id_on_the_first_half():
    doc = NoteDocument.new(blocks=[Block(None, "task", "buy 😀 milk", {"checked": True, "depth": 1})])
    [block_id] = ids(doc)
    tail_id = doc.split(block_id, 6)  # code points: "buy 😀 " is 6 of them
    head, tail = doc.blocks()
    assert head.id == block_id and head.text == "buy 😀 "
    assert tail.id == tail_id != block_id and is_ulid(tail_id)
    assert tail.text == "milk" and tail.type == "task" and tail.attrs == head.attrs
    assert doc.split(block_id, 0) and doc.blocks()[0].text == ""
    assert_index_consistent(doc)


@pytest.mark.parametrize("offset", [-1, 12, 1.5, True])
def test_split_offset_out_of_range(offset):
    doc = note("hello world")
    [block_id] = ids(doc)
    frontier = doc.frontier()
    with pytest.raises(ValidationFailed) as error:
        doc.split(block_id, offset)
    assert error.value.field_errors[0].code == "out_of_range"
    assert error.value.extra["max"] == 11
    assert doc.frontier() == frontier and texts(doc) == ["hello world"]


def test_join_appends_and_deletes_the_second():
    doc = note("Hello, ", "x", "world")
    first, middle, second = ids(doc)
    doc.join(first, second)
    assert doc.blocks() == [Block(first, "paragraph", "Hello, world"), Block(middle, "paragraph", "x")]
    assert_index_consistent(doc)
    with pytest.raises(ValidationFailed):
        doc.join(first, first)


def test_copy_mints_new_ids_cut_paste_keeps_them():
    doc = note("a", "b", "c", "d")
    a, b, c, d = ids(doc)
    copies = doc.copy_blocks([a, b], d)
    assert texts(doc) == ["a", "b", "c", "d", "a", "b"]
    assert ids(doc)[4:] == copies and not set(copies) & {a, b, c, d}

    doc.cut_paste([d, a], None)
    assert ids(doc)[:4] == [d, a, b, c]
    doc.cut_paste([b, c], copies[1])
    assert ids(doc) == [d, a, copies[0], copies[1], b, c]
    doc.cut_paste([a, b], a)  # pasting relative to a block being moved is well-defined
    assert ids(doc) == [d, a, b, copies[0], copies[1], c]
    assert len(set(ids(doc))) == 6
    assert_index_consistent(doc)


def test_unknown_ids_raise_not_found_and_change_nothing():
    doc = note("a", "b")
    a, b = ids(doc)
    frontier = doc.frontier()
    ghost = "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
    for edit in [
        lambda: doc.block(ghost),
        lambda: doc.index_of(ghost),
        lambda: doc.insert_after(ghost, Block(None, "paragraph")),
        lambda: doc.insert_before(ghost, Block(None, "paragraph")),
        lambda: doc.replace_text(ghost, "x"),
        lambda: doc.set_block(ghost, type="quote"),
        lambda: doc.delete(ghost),
        lambda: doc.move_after(ghost, a),
        lambda: doc.move_after(a, ghost),
        lambda: doc.split(ghost, 0),
        lambda: doc.join(a, ghost),
        lambda: doc.copy_blocks([a, ghost], None),
        lambda: doc.cut_paste([a, ghost], None),
        lambda: doc.cut_paste([a], ghost),
    ]:
        with pytest.raises(NotFound) as error:
            edit()
        assert error.value.field_errors[0].code == "unknown_block"
        assert error.value.extra == {"block_id": ghost}
    assert doc.frontier() == frontier and ids(doc) == [a, b]
    # The next commit carries nothing a refused edit left behind.
    doc.replace_text(a, "a!")
    assert texts(NoteDocument.load(doc.snapshot())) == ["a!", "b"]


def test_meta_round_trip_and_minimal_writes():
    doc = NoteDocument.new(NoteMeta("Draft", ("Project", "Book"), {"status": "active", "n": 1}), peer_id=3)
    assert doc.meta == NoteMeta("Draft", ("Project", "Book"), {"status": "active", "n": 1})
    meta = NoteMeta("Final", ("Audiobook", "Project", "Book"), {"n": 1, "tags": ["a", {"b": None}], "ok": True})
    before = doc.loro.oplog_vv.get_last(3)
    doc.set_meta(meta)
    assert doc.meta == meta
    # title + one type insert + delete "status" + set "tags" + set "ok"; "n" is untouched.
    assert doc.loro.oplog_vv.get_last(3) - before == 5
    frontier = doc.frontier()
    doc.set_meta(meta)
    assert doc.frontier() == frontier
    doc.set_meta(NoteMeta("Final", (), {"n": True}))  # True is not 1
    assert doc.meta == NoteMeta("Final", (), {"n": True}) and doc.meta.properties["n"] is True


def test_set_meta_rejects_unstorable_values():
    doc = NoteDocument.new(NoteMeta("x"))
    for meta in [NoteMeta("\ud800"), NoteMeta("x", properties={"when": object()}), NoteMeta("x", properties={"n": 2**64})]:
        with pytest.raises(ValidationFailed):
            doc.set_meta(meta)
    assert doc.meta == NoteMeta("x")


def test_snapshot_round_trip():
    doc = NoteDocument.new(NoteMeta("T", ("A",), {"k": [1, 2]}), [Block(None, "code", "x = 1\n", {"language": "py"})])
    loaded = NoteDocument.load(doc.snapshot(), peer_id=99)
    assert loaded.blocks() == doc.blocks() and loaded.meta == doc.meta
    assert loaded.frontier() == doc.frontier() and loaded.peer_id == 99


def test_load_rejects_garbage_and_incomplete_exports():
    with pytest.raises(ValidationFailed) as garbage:
        NoteDocument.load(b"not a snapshot")
    assert garbage.value.field_errors[0].code == "malformed_snapshot"

    doc = note("a")
    since = doc.frontier()
    doc.replace_text(ids(doc)[0], "ab")
    with pytest.raises(ValidationFailed) as partial:
        NoteDocument.load(doc.export_updates(since))
    assert partial.value.field_errors[0].code == "malformed_snapshot"


def test_blocks_written_off_schema_by_another_peer_still_read_as_valid_blocks():
    raw = LoroDoc()
    blocks = raw.get_movable_list("blocks")
    odd = blocks.insert_container(0, LoroMap())  # no attrs, unknown type, text as a plain string
    odd.insert("id", "01JB2K7Q9XN4M8YV3TD0FZ5ER0")
    odd.insert("type", "banner")
    odd.insert("text", "plain")
    heading = blocks.insert_container(1, LoroMap())  # a JS number and a wrong-typed attr
    heading.insert("id", "01JB2K7Q9XN4M8YV3TD0FZ5ER1")
    heading.insert("type", "task")
    heading.insert_container("text", LoroText()).insert(0, "t")
    attrs = heading.insert_container("attrs", LoroMap())
    attrs.insert("depth", 2.0)
    attrs.insert("checked", "yes")
    blocks.insert(2, "not a map")
    raw.commit()

    doc = NoteDocument.load(raw.export(ExportMode.Snapshot()))
    assert doc.blocks() == [
        Block("01JB2K7Q9XN4M8YV3TD0FZ5ER0", "paragraph", "plain"),
        Block("01JB2K7Q9XN4M8YV3TD0FZ5ER1", "task", "t", {"depth": 2, "checked": False}),
        Block(None, "paragraph", ""),
    ]
    assert doc.blocks()[1].attrs["depth"] == 2 and type(doc.blocks()[1].attrs["depth"]) is int
    # Editing repairs in place: the plain string becomes a LoroText holding the same text,
    # and a missing attrs map is created with every attribute the type has.
    doc.replace_text("01JB2K7Q9XN4M8YV3TD0FZ5ER0", "plain text")
    tail = doc.split("01JB2K7Q9XN4M8YV3TD0FZ5ER0", 5)
    assert texts(doc)[:2] == ["plain", " text"] and doc.index_of(tail) == 1
    doc.set_block("01JB2K7Q9XN4M8YV3TD0FZ5ER0", type="callout", attrs={"kind": "warning"})
    reread = NoteDocument.load(doc.snapshot())
    assert reread.block("01JB2K7Q9XN4M8YV3TD0FZ5ER0").attrs == {"kind": "warning", "fold": "", "title": ""}
    assert reread.loro.get_deep_value()["blocks"][0]["attrs"] == {"kind": "warning", "fold": "", "title": ""}


def test_replace_text_stays_fast_when_a_full_diff_would_not():
    rng = random.Random(7)
    old, new = ("".join(rng.choice("ab \n") for _ in range(100_000)) for _ in range(2))
    doc = NoteDocument.new(blocks=[Block(None, "code", old)])
    [block_id] = ids(doc)
    started = time.perf_counter()
    doc.replace_text(block_id, new)  # a plain Myers diff of this takes over a minute
    assert time.perf_counter() - started < 5
    assert doc.block(block_id).text == new


def test_keystrokes_insert_and_delete_text_by_code_point() -> None:
    doc = NoteDocument.new(blocks=[Block(None, "paragraph", "héllo")])
    block_id = doc.blocks()[0].id
    doc.insert_text(block_id, 5, " wörld 漢")
    doc.delete_text(block_id, 0, 1)
    assert doc.block(block_id).text == "éllo wörld 漢"
    frontier = doc.frontier()
    for offset, length in ((99, 0), (0, 99), (2, -1)):
        with pytest.raises(ValidationFailed):
            doc.delete_text(block_id, offset, length)
    with pytest.raises(ValidationFailed):
        doc.insert_text(block_id, 13, "x")
    assert doc.frontier() == frontier


def test_blocks_at_each_walks_versions_and_leaves_the_document_at_its_latest() -> None:
    doc = NoteDocument.new(NoteMeta("Walk"), [Block(None, "paragraph", "one")])
    first = doc.frontier()
    only = doc.blocks()[0].id
    doc.replace_text(only, "one, edited")
    second = doc.frontier()
    added = doc.insert_after(only, Block(None, "paragraph", "two"))
    third = doc.frontier()
    walked = [[b.text for b in blocks] for blocks in doc.blocks_at_each([third, second, first])]
    assert walked == [["one, edited", "two"], ["one, edited"], ["one"]]
    # Back at its latest, and writable: the walk changed nothing.
    assert doc.frontier() == third and [b.id for b in doc.blocks()] == [only, added]
    doc.replace_text(added, "two, edited")
    assert doc.block(added).text == "two, edited"
    with pytest.raises(ValidationFailed):
        list(NoteDocument.new().blocks_at_each([third]))  # a version that document never had
