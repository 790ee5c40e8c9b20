"""The ops write path's shortcut for typing is the full recompute, only cheaper.

``NoteService.apply_ops`` writes an import that only edited block text from those
blocks alone (``BlockEdits``: their rows, their links, the chunks of their
sections). Here random edit sequences land through ``apply_ops`` on two copies of
one note in two databases — one taking the shortcut, one made to compare every
block and re-chunk the whole note as before — and everything the write path
stores must come out the same: note row, block rows with provenance, chunks,
text links and change-feed rows. The shortcut's result must also equal a full
re-projection computed from the final document.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastpad.knowledge.note_core import block_row
from fastpad.knowledge.notes import NoteService
from fastpad.notes import Block, NoteDocument, NoteMeta, new_id
from fastpad.notes.provenance import Origin, Provenance
from fastpad.search.indexing import note_chunks
from fastpad.store import NoteWrite
from tests.helpers_store import make_services

AT = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
LONG = "Long paragraph about fusion and ranking, " * 9  # ~370 characters: packing splits sections


def _initial_blocks() -> list[Block]:
    return [
        Block(new_id(), "paragraph", "Preamble mentions [[Alpha]]."),
        Block(new_id(), "heading", "Intro", {"level": 1}),
        Block(new_id(), "paragraph", LONG),
        Block(new_id(), "paragraph", LONG + " more"),
        Block(new_id(), "paragraph", ""),
        Block(new_id(), "divider", ""),
        Block(new_id(), "paragraph", "Short one with @bob"),
        Block(new_id(), "heading", "Details", {"level": 2}),
        Block(new_id(), "table_row", "| key | value |", {"header": True, "delimiter": "| --- | --- |"}),
        Block(new_id(), "table_row", "| a | 1 |"),
        Block(new_id(), "list_item", "point"),
        Block(new_id(), "heading", "Leaf", {"level": 2}),
        Block(new_id(), "heading", "Empty parent", {"level": 1}),
        Block(new_id(), "heading", "Child", {"level": 2}),
        Block(new_id(), "paragraph", "child text"),
        Block(new_id(), "code", "x = 1 # [[Not a link]]", {"language": "python"}),
        Block(new_id(), "paragraph", LONG),
    ]


EDIT = st.one_of(
    st.tuples(st.just("type"), st.integers(0, 30), st.integers(0, 400),
              st.sampled_from(["a", " ", "[", "]", "[[Beta]]", "@eve ", "\n", "é", "x" * 500])),
    st.tuples(st.just("delete"), st.integers(0, 30), st.integers(0, 400), st.integers(1, 400)),
    st.tuples(st.just("replace"), st.integers(0, 30), st.sampled_from(["", "plain", "see [[Gamma]]", LONG * 2])),
    st.tuples(st.just("noop"), st.integers(0, 30)),
    st.tuples(st.just("two"), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.just("insert"), st.integers(0, 30), st.sampled_from(["paragraph", "heading"])),
    st.tuples(st.just("remove"), st.integers(0, 30)),
    st.tuples(st.just("retype"), st.integers(0, 30), st.sampled_from(["paragraph", "heading", "quote"])),
)


def _apply(doc: NoteDocument, edit: tuple) -> None:
    blocks = doc.blocks()
    block = blocks[edit[1] % len(blocks)]
    kind = edit[0]
    if kind == "type":
        doc.insert_text(block.id, min(edit[2], len(block.text)), edit[3])
    elif kind == "delete":
        offset = min(edit[2], len(block.text))
        doc.delete_text(block.id, offset, min(edit[3], len(block.text) - offset))
    elif kind == "replace":
        doc.replace_text(block.id, edit[2])
    elif kind == "noop":
        doc.insert_text(block.id, 0, "zz")
        doc.delete_text(block.id, 0, 2)
    elif kind == "two":
        other = blocks[edit[2] % len(blocks)]
        doc.insert_text(block.id, 0, "b")
        doc.insert_text(other.id, len(other.text) if other.id != block.id else 1, "e")
    elif kind == "insert":
        doc.insert_after(block.id, Block(None, edit[2], "new block [[Delta]]", {"level": 2} if edit[2] == "heading" else {}))
    elif kind == "remove" and len(blocks) > 1:
        doc.delete(block.id)
    elif kind == "retype":
        doc.set_block(block.id, type=edit[2])


def _seed(svc, ws, note_id: str, doc: NoteDocument) -> None:
    """The same note (same CRDT state, same id) in a second database, through the write path."""
    stamp = Provenance.for_write(Origin.HUMAN_TYPED)
    with svc.store.write(ws.id) as tx:
        NoteService._commit(tx, NoteWrite(
            note_id=note_id, kind="create", at=AT, actor=replace(ws.owner.actor(), origin=stamp.origin.value),
            update=doc.export_updates(None), snapshot=doc.snapshot(), frontier=doc.frontier(),
            title=doc.meta.title, types=doc.meta.types, properties=doc.meta.properties,
            blocks=[block_row(b, i, stamp) for i, b in enumerate(doc.blocks())],
        ), previous_blocks=[])


def _state(svc, ws, note_id: str) -> dict:
    with svc.store.read(ws.id) as tx:
        row = tx.note(note_id, with_snapshot=True)
        blocks = tx.blocks(note_id)
        chunks = tx.search_index.note_chunks(note_id)
        links = sorted(
            (e.source_block_id, e.target_key, e.target_title, e.target_note_id is None, e.status, e.confidence,
             e.evidence_text, e.evidence_origin, e.evidence_review_state, e.created_at, e.updated_at)
            for e in tx.links.text_edges(note_id)
        )
        feed = [(f.kind, f.note_id, f.block_ids, f.blocks_touched, f.at)
                for f in tx.feed.read(after_seq=0, upto_seq=tx.feed.head(), limit=10_000, note_ids=[note_id])]
        expected_chunks = [stored for stored, _ in note_chunks(row, blocks)]
    return {
        "note": (row.title, row.types, row.properties, row.frontier, row.op_seq, row.updated_at),
        "snapshot_blocks": NoteDocument.load(row.snapshot).blocks(), "blocks": blocks, "chunks": chunks,
        "links": links, "feed": feed, "expected_chunks": expected_chunks,
    }


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDIT, min_size=1, max_size=8))
def test_typing_shortcut_stores_what_the_full_recompute_stores(make_store, fast_hasher, edits) -> None:
    fast, full = make_services(make_store(), fast_hasher), make_services(make_store(), fast_hasher)
    full.notes._commit_text_edits = lambda *args, **kwargs: False  # the full recompute, for reference
    pairs = []
    for svc in (fast, full):
        svc.clock.now = AT
        pairs.append((svc, svc.workspace("Alpha")))
    (_, fast_ws), (_, full_ws) = pairs
    fast.notes.create(fast_ws.owner, title="Alpha")  # a link target, in both
    full.notes.create(full_ws.owner, title="Alpha")

    note_id = new_id()
    server = NoteDocument.new(NoteMeta("Shortcut", ("Project",), {"date": "2025-02-01"}), _initial_blocks())
    for svc, ws in pairs:
        _seed(svc, ws, note_id, server)
    client = NoteDocument.load(server.snapshot(), peer_id=77)
    frontier = client.frontier()
    for step, edit in enumerate(edits):
        _apply(client, edit)
        ops = client.export_updates(frontier)
        results = [svc.notes.apply_ops(ws.owner, note_id, ops=ops, peer_id="p", expected_frontier=frontier)
                   for svc, ws in pairs]
        assert results[0] == results[1]
        frontier = results[0].frontier
        for svc, _ in pairs:
            svc.clock.advance(seconds=1)
        got, want = _state(fast, fast_ws, note_id), _state(full, full_ws, note_id)
        assert got == want, f"after edit {step}: {edit}"
        assert got["chunks"] == got["expected_chunks"]
        assert [(b.block_id, b.type, b.text, b.attrs) for b in got["blocks"]] == [
            (b.id, b.type, b.text, b.attrs) for b in got["snapshot_blocks"]]
        assert [b.position for b in got["blocks"]] == list(range(len(got["blocks"])))
