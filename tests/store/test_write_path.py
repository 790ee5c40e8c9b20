"""The single write path: op log, projection, lexical index and change feed commit together."""

from __future__ import annotations

import pytest

from fastpad.errors import StaleFrontier, ValidationFailed
from fastpad.notes import Block
from fastpad.notes.blocks import MAX_TITLE_CHARS
from fastpad.store import Actor, IdempotencyRecord, NoteWrite
from fastpad.store.claims import CLAIMED, Claim, claiming, written_in
from tests.helpers_store import edit_ops, feed_rows, lexical, make_services


@pytest.fixture
def svc(store, fast_hasher):
    return make_services(store, fast_hasher)


def snapshot_of_everything(store, workspace_id, note_id):
    with store.read(workspace_id) as tx:
        note = tx.note(note_id, with_snapshot=True)
        return {
            "note": note,
            "op_log": tx.op_log(note_id),
            "blocks": tx.blocks(note_id),
            "changes": feed_rows(tx),
            "search_old": [h.block_id for h in lexical(tx, "original")],
        }


def test_a_committed_write_is_searchable_immediately(svc) -> None:
    ws = svc.workspace()
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "the original sentence")])
    block_id = note.blocks[0]["id"]
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(block_id, "a zeppelin sentence"))
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id="1", expected_frontier=frontier)
    with svc.store.read(ws.id) as tx:
        assert [(h.note_id, h.block_id) for h in lexical(tx, "zeppelin")] == [(note.id, block_id)]
        assert lexical(tx, "original") == []


def test_a_write_appends_the_op_log_and_one_change_per_commit(svc) -> None:
    ws = svc.workspace()
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "one")])
    block_id = note.blocks[0]["id"]
    for text in ("two", "three"):
        ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d, t=text: d.replace_text(block_id, t))
        svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id="7", expected_frontier=frontier)
    svc.notes.archive(ws.owner, note.id)
    with svc.store.read(ws.id) as tx:
        log = tx.op_log(note.id)
        changes = feed_rows(tx)
        row = tx.note(note.id)
    assert [e.seq for e in log] == [1, 2, 3]
    assert [e.kind for e in log] == ["create", "ops", "ops"]
    assert log[-1].frontier == row.frontier and log[1].peer_id == "7"
    assert {e.origin for e in log} == {"human_typed"}
    assert [c.seq for c in changes] == [1, 2, 3, 4]
    assert [c.kind for c in changes] == ["create", "ops", "ops", "archive"]
    assert row.op_seq == 3
    # The op log replays to the stored state.
    from fastpad.notes import NoteDocument

    fresh = NoteDocument.load(log[0].payload)
    for entry in log[1:]:
        fresh.apply_update(entry.payload)
    assert fresh.frontier() == row.frontier
    assert [b.text for b in fresh.blocks()] == ["three"]


def test_a_failed_transaction_leaves_nothing_behind(svc) -> None:
    ws = svc.workspace()
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "original words")])
    before = snapshot_of_everything(svc.store, ws.id, note.id)
    with pytest.raises(RuntimeError, match="boom"):
        with svc.store.write(ws.id) as tx:
            tx.write_note(NoteWrite(
                note_id=note.id, kind="ops", at=svc.clock(), actor=Actor("person", ws.owner_id, None, "human_typed"),
                expected_frontier=note.frontier, update=b"bytes", snapshot=b"garbage", frontier="fp1:AAAA",
                blocks=[],
            ))
            raise RuntimeError("boom")
    assert snapshot_of_everything(svc.store, ws.id, note.id) == before


def test_compare_and_set_on_the_frontier(svc) -> None:
    ws = svc.workspace()
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "x")])
    with pytest.raises(StaleFrontier) as caught:
        with svc.store.write(ws.id) as tx:
            tx.write_note(NoteWrite(note_id=note.id, kind="archive", at=svc.clock(),
                                    actor=Actor("person", ws.owner_id, None, "human_typed"),
                                    expected_frontier="fp1:somethingelse", archived_at=svc.clock()))
    assert caught.value.extra["current_frontier"] == note.frontier
    assert svc.notes.get(ws.owner, note.id).archived is False


def test_the_projection_changes_only_what_changed(svc) -> None:
    ws = svc.workspace()
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", t) for t in ("a", "b", "c", "d")])
    ids = [b["id"] for b in note.blocks]

    def change(doc):
        doc.move_after(ids[0], ids[2])  # b c a d
        doc.delete(ids[3])
        doc.insert_after(ids[0], Block(None, "heading", "new", {"level": 2}))

    ops, frontier = edit_ops(svc.store, ws.id, note.id, change)
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=frontier)
    view = svc.notes.get(ws.owner, note.id)
    assert [b["text"] for b in view.blocks] == ["b", "c", "a", "new"]
    assert [b["id"] for b in view.blocks][:3] == [ids[1], ids[2], ids[0]]
    assert view.blocks[3]["attrs"] == {"level": 2}
    with svc.store.read(ws.id) as tx:
        assert [b.position for b in tx.blocks(note.id)] == [0, 1, 2, 3]
        assert [h.block_id for h in lexical(tx, "new")] == [view.blocks[3]["id"]]
        assert lexical(tx, "d") == []


def test_idempotency_records_first_one_wins_and_expire(store, svc) -> None:
    ws = svc.workspace()
    first = IdempotencyRecord("hash-1", 201, {"content-type": "application/json"}, b'{"id": 1}')
    assert store.idempotency_lookup(ws.id, "token:x", "k1") is None
    assert store.idempotency_save(ws.id, "token:x", "k1", first) is True
    assert store.idempotency_save(ws.id, "token:x", "k1", IdempotencyRecord("hash-2", 500, {}, b"")) is False
    got = store.idempotency_lookup(ws.id, "token:x", "k1")
    assert (got.request_hash, got.status, got.headers, got.body) == ("hash-1", 201, first.headers, first.body)
    # Scoped per credential and per workspace.
    assert store.idempotency_lookup(ws.id, "token:y", "k1") is None
    other = svc.workspace()
    assert store.idempotency_lookup(other.id, "token:x", "k1") is None


def test_an_idempotency_claim_commits_and_rolls_back_with_the_write_it_guards(svc) -> None:
    ws = svc.workspace()
    store, principal_key = svc.store, "person:owner"

    def lookup(key: str) -> IdempotencyRecord | None:
        return store.idempotency_lookup(ws.id, principal_key, key)

    # A write that fails takes its claim with it: the retry runs the request again.
    kept = svc.notes.create(ws.owner, title="Kept")
    refused = Claim(ws.id, principal_key, "refused", "hash-1")
    with pytest.raises(ValidationFailed), claiming(refused):  # refused inside the write's transaction
        svc.notes.rename(ws.owner, kept.id, "t" * (MAX_TITLE_CHARS + 1))
    assert lookup("refused") is None and not refused.committed

    # A write that commits holds its key in that same commit, naming what it wrote.
    created = Claim(ws.id, principal_key, "created", "hash-2")
    with claiming(created):
        note = svc.notes.create(ws.owner, title="Claimed")
    record = lookup("created")
    assert created.committed and record is not None and record.status == CLAIMED
    assert record.request_hash == "hash-2" and written_in(record.body) == [["create", note.id, None]]

    # The response replaces the claim; a claim never replaces a response.
    store.idempotency_save(ws.id, principal_key, "created", IdempotencyRecord("hash-2", 201, {}, b"{}"))
    with claiming(Claim(ws.id, principal_key, "created", "hash-2")):
        svc.notes.create(ws.owner, title="Another")
    assert (lookup("created").status, lookup("created").body) == (201, b"{}")
