"""Trash, archive and purge: restore keeps everything; purge removes only what expired."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fastpad.errors import PolicyDenied, ValidationFailed
from fastpad.knowledge.changes import ChangeFeedService
from fastpad.knowledge.history import HistoryService
from fastpad.knowledge.memory import MemoryService
from fastpad.knowledge.trash import PurgeSchedule, TrashService
from fastpad.notes import Block
from fastpad.store import IdempotencyRecord
from tests.helpers_store import lexical


@pytest.fixture
def trash(svc) -> TrashService:
    return TrashService(svc.store, clock=svc.clock)


def token(svc, ws, scopes, **kwargs):
    plaintext, _ = svc.tokens.create(ws.id, scopes=list(scopes), **kwargs)
    return svc.tokens.authenticate(plaintext)


def state(store, workspace_id, note_id, word):
    """Everything stored about a note: row, op log, blocks, index hits, edges both ways."""
    with store.read(workspace_id) as tx:
        return {
            "row": tx.note(note_id) is not None,
            "op_log": len(tx.op_log(note_id)),
            "blocks": [b.text for b in tx.blocks(note_id)],
            "indexed": sorted(h.note_id for h in lexical(tx, word)),
            "out": [e.link.target_title for e in tx.links.edges(note_id, direction="out", include_unresolved=True,
                                                                 include_trashed=True)],
            "in": [e.link.source_note_id for e in tx.links.edges(note_id, direction="in", include_trashed=True)],
        }


def test_restore_from_trash_keeps_blocks_history_and_links(svc, ws) -> None:
    target = svc.notes.create(ws.owner, title="Beta", blocks=[Block(None, "paragraph", "the target")])
    note = svc.notes.create(ws.owner, title="Alpha", blocks=[Block(None, "paragraph", "zebra, see [[Beta]]")])
    before = state(svc.store, ws.id, note.id, "zebra")
    assert before["out"] == ["Beta"] and before["indexed"] == [note.id]
    author_before = HistoryService(svc.store).block(ws.owner, note.id, note.blocks[0]["id"])

    svc.notes.trash(ws.owner, note.id)
    trashed = state(svc.store, ws.id, note.id, "zebra")
    assert trashed == {**before, "indexed": []}  # out of search while in the trash; nothing else lost
    svc.notes.restore(ws.owner, note.id)
    assert state(svc.store, ws.id, note.id, "zebra") == before
    assert HistoryService(svc.store).block(ws.owner, note.id, note.blocks[0]["id"]).author == author_before.author
    assert state(svc.store, ws.id, target.id, "target")["in"] == [note.id]


def test_archiving_is_a_person_s_act(svc, ws) -> None:
    note = svc.notes.create(ws.owner, title="Keep")
    bot = token(svc, ws, ["notes:read", "notes:write", "notes:delete"], auto_apply=True)
    with pytest.raises(PolicyDenied) as denied:
        svc.notes.archive(bot, note.id)
    assert denied.value.extra["reason"] == "person_only"
    assert svc.notes.get(ws.owner, note.id).archived is False
    # A person's own CLI token may; so may their session.
    cli = token(svc, ws, ["notes:read", "notes:write"], person_email=ws.owner_email)
    assert svc.notes.archive(cli, note.id).archived is True
    assert svc.notes.unarchive(ws.owner, note.id).archived is False
    # Trash is a different grant (notes:delete), open to an agent that holds it.
    assert svc.notes.trash(bot, note.id).trashed is True


def test_purge_removes_only_notes_trashed_longer_than_the_retention_window(svc, ws, trash) -> None:
    old = svc.notes.create(ws.owner, title="Old", blocks=[Block(None, "paragraph", "walrus old [[Fresh]]")])
    fresh = svc.notes.create(ws.owner, title="Fresh", blocks=[Block(None, "paragraph", "walrus fresh")])
    live = svc.notes.create(ws.owner, title="Live", blocks=[Block(None, "paragraph", "walrus live [[Old]]")])
    restored = svc.notes.create(ws.owner, title="Restored", blocks=[Block(None, "paragraph", "walrus back")])
    MemoryService(svc.store, svc.notes, clock=svc.clock).designate(ws.owner, old.id)
    svc.notes.trash(ws.owner, old.id)
    svc.notes.trash(ws.owner, restored.id)
    svc.clock.advance(days=20)
    svc.notes.trash(ws.owner, fresh.id)
    svc.notes.restore(ws.owner, restored.id)
    svc.clock.advance(days=10)  # old: trashed exactly 30 days ago; fresh: 10 days ago

    report = trash.purge_expired(ws.id)
    assert report.purged == [old.id] and report.cutoff == svc.clock() - timedelta(days=30)
    gone = state(svc.store, ws.id, old.id, "walrus")
    assert gone == {"row": False, "op_log": 0, "blocks": [], "indexed": sorted([live.id, restored.id]),
                    "out": [], "in": []}
    for kept in (fresh, live, restored):
        assert state(svc.store, ws.id, kept.id, "walrus")["blocks"] == [kept.blocks[0]["text"]]
    # The live note's link to the purged one is unresolved now, not dangling.
    with svc.store.read(ws.id) as tx:
        [edge] = tx.links.edges(live.id, direction="out", include_unresolved=True)
        assert (edge.link.target_title, edge.link.target_note_id) == ("Old", None)
    assert MemoryService(svc.store, svc.notes).index(ws.owner).topics == []
    last = ChangeFeedService(svc.store).changes(ws.owner).items[-1]
    assert (last.kind, last.note_id, last.actor_kind, last.actor_id) == ("purge", old.id, "system", None)

    assert trash.purge_expired(ws.id).purged == []  # nothing left to do
    svc.clock.advance(days=20)
    assert trash.purge_expired(ws.id).purged == [fresh.id]


def test_the_retention_window_is_configurable_and_batches_cover_a_backlog(svc, ws) -> None:
    notes = [svc.notes.create(ws.owner, title=f"n{i}").id for i in range(5)]
    for note_id in notes:
        svc.notes.trash(ws.owner, note_id)
    svc.clock.advance(hours=2)
    assert TrashService(svc.store, retention=timedelta(hours=3), clock=svc.clock).purge_expired(ws.id).purged == []
    small_batches = TrashService(svc.store, retention=timedelta(hours=1), clock=svc.clock, batch_size=2)
    assert sorted(small_batches.purge_expired(ws.id).purged) == sorted(notes)
    with pytest.raises(ValidationFailed):
        TrashService(svc.store, retention=timedelta(days=-1))


def test_the_purge_removes_idempotency_records_no_request_can_replay(svc, ws, trash) -> None:
    def record(body: bytes) -> IdempotencyRecord:
        return IdempotencyRecord("hash", 201, {"content-type": "application/json"}, body)

    with svc.store.write(ws.id) as tx:
        tx.idempotency.put("agent", "old", record(b'{"text": "the note that was purged"}'), now=svc.clock())
    svc.clock.advance(hours=23)
    with svc.store.write(ws.id) as tx:
        tx.idempotency.put("agent", "recent", record(b"{}"), now=svc.clock())
    svc.clock.advance(hours=1)  # "old" is 24 hours old: it can no longer be replayed
    assert trash.purge_expired(ws.id).idempotency_records == 1
    with svc.store.read(ws.id) as tx:
        assert tx.idempotency.get("agent", "recent", now=svc.clock()) is not None
        assert tx.idempotency.get("agent", "old", now=svc.clock() - timedelta(hours=2)) is None  # gone, not hidden
    assert trash.purge_expired(ws.id).as_dict()["idempotency_records"] == 0


def test_the_schedule_purges_when_started_and_stops_without_waiting_out_its_interval(svc, ws) -> None:
    """In every workspace of the deployment: one created after the first is purged too."""
    doomed = svc.notes.create(ws.owner, title="Doomed")
    svc.notes.trash(ws.owner, doomed.id)
    other = svc.workspace("Other")
    also_doomed = svc.notes.create(other.owner, title="Doomed too")
    svc.notes.trash(other.owner, also_doomed.id)
    schedule = PurgeSchedule(TrashService(svc.store, retention=timedelta(0), clock=svc.clock),
                             interval=timedelta(hours=1))
    schedule.start()
    thread = schedule._thread  # noqa: SLF001 - whether it ends is what is under test
    try:
        assert schedule.wait_passes(1, timeout=30)
        with svc.store.read(ws.id) as tx:
            assert tx.note(doomed.id) is None
        with svc.store.read(other.id) as tx:
            assert tx.note(also_doomed.id) is None
    finally:
        schedule.stop(timeout=30)
    assert not thread.is_alive() and schedule.passes == 1  # woken from its hour-long wait, not run again
