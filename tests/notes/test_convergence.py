"""Three replicas edit one note concurrently, then exchange updates in different orders.

They must converge to the same blocks and metadata, with no ULID duplicated and
none lost except by a delete (or a join, which deletes its second block).

Loro's movable list lets a move beat a concurrent delete: a block deleted on one
replica while another replica moved it survives, at its new place. So a deleted
id may come back — only if some replica moved it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from fastpad.notes import Block, NoteDocument, NoteMeta

TEXT = st.text(alphabet="ab é😀\n", max_size=6)
INDEX = st.integers(min_value=0, max_value=20)

EDITS = st.one_of(
    st.tuples(st.just("type"), INDEX, INDEX, st.integers(0, 3), TEXT),
    st.tuples(st.just("move"), INDEX, INDEX),
    st.tuples(st.just("split"), INDEX, INDEX),
    st.tuples(st.just("insert"), INDEX, TEXT),
    st.tuples(st.just("delete"), INDEX),
    st.tuples(st.just("join"), INDEX),
    st.tuples(st.just("copy"), INDEX, INDEX),
    st.tuples(st.just("cut"), INDEX, INDEX),
    st.tuples(st.just("retype"), INDEX, st.sampled_from(["paragraph", "heading", "task"])),
    st.tuples(st.just("meta"), TEXT),
)


@dataclass
class Ledger:
    """What the edits did to identities, to check the merged result against."""

    created: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    moved: set[str] = field(default_factory=set)


def apply_edit(doc: NoteDocument, edit: tuple, ledger: Ledger) -> None:
    kind, *args = edit
    blocks = doc.blocks()
    if not blocks and kind not in ("insert", "meta"):
        return
    pick = lambda i: blocks[i % len(blocks)]  # noqa: E731
    # An anchor index one past the end means "no anchor" (the start).
    anchor = lambda i: None if i % (len(blocks) + 1) == len(blocks) else blocks[i % (len(blocks) + 1)].id  # noqa: E731

    if kind == "type":
        i, position, removed, inserted = args
        text = pick(i).text
        position %= len(text) + 1
        doc.replace_text(pick(i).id, text[:position] + inserted + text[position + removed :])
    elif kind == "move":
        ledger.moved.add(pick(args[0]).id)
        doc.move_after(pick(args[0]).id, anchor(args[1]))
    elif kind == "split":
        block = pick(args[0])
        ledger.created.add(doc.split(block.id, args[1] % (len(block.text) + 1)))
    elif kind == "insert":
        ledger.created.add(doc.insert_after(anchor(args[0]) if blocks else None, Block(None, "paragraph", args[1])))
    elif kind == "delete":
        ledger.deleted.add(pick(args[0]).id)
        doc.delete(pick(args[0]).id)
    elif kind == "join":
        position = args[0] % len(blocks)
        if position + 1 < len(blocks):
            ledger.deleted.add(blocks[position + 1].id)
            doc.join(blocks[position].id, blocks[position + 1].id)
    elif kind == "copy":
        ledger.created.update(doc.copy_blocks([pick(args[0]).id], anchor(args[1])))
    elif kind == "cut":
        ledger.moved.update({pick(args[0]).id, pick(args[0] + 1).id})
        doc.cut_paste([pick(args[0]).id, pick(args[0] + 1).id], anchor(args[1]))
    elif kind == "retype":
        doc.set_block(pick(args[0]).id, type=args[1])
    elif kind == "meta":
        meta = doc.meta
        doc.set_meta(
            NoteMeta(args[0], meta.types + (f"T{doc.peer_id}",), {**meta.properties, f"p{doc.peer_id}": args[0]})
        )


@settings(max_examples=60, deadline=None)
@given(
    start=st.lists(TEXT, min_size=1, max_size=5),
    edits=st.lists(st.lists(EDITS, max_size=8), min_size=3, max_size=3),
    orders=st.lists(st.permutations([0, 1, 2]), min_size=3, max_size=3),
)
def test_three_replicas_converge_without_duplicating_or_losing_blocks(start, edits, orders):
    origin = NoteDocument.new(NoteMeta("Shared", ("Note",)), [Block(None, "paragraph", text) for text in start], peer_id=1)
    base, base_ids = origin.frontier(), {block.id for block in origin.blocks()}
    replicas = [NoteDocument.load(origin.snapshot(), peer_id=11 + n) for n in range(3)]
    ledger = Ledger()
    for replica, replica_edits in zip(replicas, edits):
        for edit in replica_edits:
            apply_edit(replica, edit, ledger)
            assert_index_matches(replica)

    own_updates = [replica.export_updates(base) for replica in replicas]
    for replica, order in zip(replicas, orders):
        # Every replica receives every update, its own included (a resend changes nothing).
        for sender in order:
            replica.apply_update(own_updates[sender])
        assert_index_matches(replica)

    first = replicas[0]
    for other in replicas[1:]:
        assert other.blocks() == first.blocks()
        assert other.meta == first.meta
        assert other.compare(other.frontier(), first.frontier()) == "equal"

    ids = [block.id for block in first.blocks()]
    assert len(ids) == len(set(ids)), "a ULID is duplicated"
    known = base_ids | ledger.created
    assert known - ledger.deleted <= set(ids) <= known, "a ULID was lost, or came from nowhere"
    assert set(ids) & ledger.deleted <= ledger.moved, "a deleted block came back without a concurrent move"


def assert_index_matches(doc: NoteDocument) -> None:
    for position, block in enumerate(NoteDocument.load(doc.snapshot()).blocks()):
        assert doc.index_of(block.id) == position
