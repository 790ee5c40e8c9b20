"""Concurrent writers: one frontier, one winner; the change feed stays gap-free."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from fastpad.errors import StaleFrontier
from fastpad.notes import Block
from tests.helpers_store import client_copy, feed_rows, make_services


def test_concurrent_edits_from_one_frontier_have_exactly_one_winner(store, fast_hasher) -> None:
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "start")])
    block_id = note.blocks[0]["id"]
    edits = []
    for i in range(6):
        doc, frontier = client_copy(store, ws.id, note.id)
        doc.replace_text(block_id, f"writer {i}")
        edits.append(doc.export_updates(frontier))

    def send(ops: bytes) -> str:
        try:
            svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=note.frontier)
            return "ok"
        except StaleFrontier:
            return "stale"

    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(send, edits))
    assert sorted(outcomes) == ["ok"] + ["stale"] * 5
    with store.read(ws.id) as tx:
        assert [e.seq for e in tx.op_log(note.id)] == [1, 2]


def test_concurrent_creates_get_distinct_contiguous_feed_seqs(store, fast_hasher) -> None:
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()

    def create(i: int) -> str:
        return svc.notes.create(ws.owner, title=f"n{i}", blocks=[Block(None, "paragraph", f"text {i}")]).id

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(create, range(16)))
    with store.read(ws.id) as tx:
        changes = feed_rows(tx)
        listed = tx.list_notes(limit=100)
    assert [c.seq for c in changes] == list(range(1, 17))
    assert sorted(c.note_id for c in changes) == sorted(ids)
    assert len(listed) == 16
